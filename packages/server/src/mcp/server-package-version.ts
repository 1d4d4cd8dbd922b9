import { createRequire } from "node:module";

// src/mcp and dist/mcp are both two levels below the package root.
const packageJson = createRequire(import.meta.url)("../../package.json") as { version: string };

/** The version of `@skillbox/server`, reported to MCP clients by default. */
export const SERVER_PACKAGE_VERSION: string = packageJson.version;
