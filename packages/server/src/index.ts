export * from "./a2a/index.js";
export * from "./http/index.js";
export * from "./mcp/index.js";
