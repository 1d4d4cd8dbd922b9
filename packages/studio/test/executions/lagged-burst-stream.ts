import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";

/** A loopback stand-in for `GET /api/events`; the test closes it by this handle. */
export interface LaggedBurstStream {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves what a live stream sends a tab that reads too slowly during a storm: `ready`, then
 * `notices` lagged notices, each in a chunk of its own (20 ms apart, so the page hears them one
 * by one, as it would), then the end of the stream.
 */
export async function startLaggedBurstStream(options: { notices: number }): Promise<LaggedBurstStream> {
  const server = createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.write('event: ready\ndata: {"kinds":["executions","activity"],"skill":null}\n\n');
    let sent = 0;
    const timer = setInterval(() => {
      if (sent === options.notices) {
        clearInterval(timer);
        response.end();
        return;
      }
      sent += 1;
      response.write('event: lagged\ndata: {"dropped":1}\n\n');
    }, 20);
    request.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Reloads `page` with its next connection to the live stream sent to `stream`, and every later
 * one refused; resolves once the page shows the stream ended (it has heard every notice).
 */
export async function reloadWithLaggedBurst(page: Page, stream: LaggedBurstStream): Promise<void> {
  let connections = 0;
  await page.route("**/api/events*", (route) => {
    connections += 1;
    return connections === 1 ? route.continue({ url: stream.url }) : route.abort();
  });
  await page.reload();
  await page.locator("[data-live=reconnecting]").waitFor();
  if (connections === 0) throw new Error("The page never connected to the stand-in live stream");
}
