import { createServer } from "node:net";

/**
 * A TCP port free on 127.0.0.1 right now: the OS picks it for a listener that closes at once.
 * A server started on it soon after almost always gets it; the helpers that use it retry on a clash.
 */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port assigned");
  return address.port;
}
