import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";

/** A loopback stand-in for `GET /api/events`; the test closes it by this handle. */
export interface HeldLiveStream {
  url: string;
  /** Ends the open streams, as a server restart or a dropped connection would. */
  end(): void;
  close(): Promise<void>;
}

/**
 * Serves a live stream that says `ready` and then nothing: while the page listens to it, it hears
 * none of the server's events — the gap a reconnect leaves, which the page must catch up on.
 */
export async function startHeldLiveStream(): Promise<HeldLiveStream> {
  const open = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.write('event: ready\ndata: {"kinds":["executions","activity"],"skill":null}\n\n');
    open.add(response);
    request.on("close", () => open.delete(response));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    end() {
      for (const response of open) response.end();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Reloads `page` with its next live-stream connection sent to `stream`, later ones to the real server. */
export async function reloadWithHeldStream(page: Page, stream: HeldLiveStream): Promise<void> {
  let connections = 0;
  await page.route("**/api/events*", (route) => {
    connections += 1;
    return connections === 1 ? route.continue({ url: stream.url }) : route.continue();
  });
  await page.reload();
  await page.locator("[data-live=live]").waitFor();
  if (connections === 0) throw new Error("The page never connected to the stand-in live stream");
}
