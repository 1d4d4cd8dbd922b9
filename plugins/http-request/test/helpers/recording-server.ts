import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the server saw of one request. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A node:http server on 127.0.0.1 that records every connection and request it gets. */
export interface RecordingServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: RecordedRequest[];
  /** Connections accepted, including ones that never sent a request. */
  connections: number;
  close(): Promise<void>;
}

/** Handles a request after its body has been read and recorded. */
export type RecordingHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  recorded: RecordedRequest,
) => void;

/** Starts a server on 127.0.0.1 with a free port; the test must `close()` it. */
export async function startRecordingServer(handler: RecordingHandler): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const state = { connections: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const recorded: RecordedRequest = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(recorded);
      handler(request, response, recorded);
    });
  });
  server.on("connection", () => {
    state.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
