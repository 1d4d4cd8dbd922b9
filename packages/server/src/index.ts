export * from "./http/index.js";
export * from "./mcp/index.js";
