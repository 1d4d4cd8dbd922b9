import { Console } from "node:console";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer, type McpServerOptions } from "./create-mcp-server.js";

/** What {@link serveMcpStdio} returns. */
export interface McpStdioSession {
  /** Stops serving: closes the server, releases stdin and restores `console`. */
  close(): Promise<void>;
  /** Resolves once serving stopped, whether the client hung up or `close()` was called. */
  closed: Promise<void>;
}

/** Console methods that write to stdout. */
const STDOUT_CONSOLE_METHODS = [
  "log",
  "info",
  "debug",
  "dir",
  "dirxml",
  "table",
  "group",
  "groupCollapsed",
  "count",
  "time",
  "timeLog",
  "timeEnd",
] as const;

/**
 * stdout carries the protocol: a stray `console.log` in a skill handler would corrupt it and
 * drop the client. While serving, the console methods that print to stdout print to stderr.
 * (Direct `process.stdout.write` calls and worker threads are not covered.)
 */
function redirectConsoleToStderr(): () => void {
  const stderrConsole = new Console({ stdout: process.stderr, stderr: process.stderr });
  const originals = new Map<string, unknown>();
  const target = console as unknown as Record<string, unknown>;
  const source = stderrConsole as unknown as Record<string, unknown>;
  for (const method of STDOUT_CONSOLE_METHODS) {
    originals.set(method, target[method]);
    target[method] = source[method];
  }
  return () => {
    for (const [method, original] of originals) target[method] = original;
  };
}

/**
 * Serves MCP on this process's stdin/stdout until the client disconnects or close() is called.
 * The server is {@link createMcpServer}'s. Resolves once the transport is listening.
 *
 * The SDK's stdio transport does not notice the client closing stdin, so this does: end of
 * stdin, or an error writing stdout (the client went away), closes the session and resolves
 * `closed` — the moment a CLI can close its watcher and database and exit.
 */
export async function serveMcpStdio(options: McpServerOptions): Promise<McpStdioSession> {
  const handle = createMcpServer(options);
  const transport = new StdioServerTransport();
  const restoreConsole = redirectConsoleToStderr();
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  let closeStarted = false;
  const close = async (): Promise<void> => {
    // Closing the server closes the transport, whose close handler calls back here.
    if (closeStarted) return closed;
    closeStarted = true;
    process.stdin.off("end", onHangUp);
    process.stdout.off("error", onHangUp);
    try {
      await handle.close();
    } finally {
      restoreConsole();
      markClosed();
    }
  };
  const onHangUp = () => void close();
  process.stdin.once("end", onHangUp);
  process.stdout.on("error", onHangUp);
  // The transport also closes itself on unreadable input; the session ends with it.
  transport.onclose = onHangUp;
  try {
    await handle.server.connect(transport);
  } catch (error) {
    await close();
    throw error;
  }
  return { close, closed };
}
