// Plain JavaScript (types in free-loopback-port.d.mts) so that bench/*.mjs, which Node runs without
// a TypeScript loader, starts its servers with the same code as the tests.
import { createServer } from "node:net";

/**
 * A TCP port free on 127.0.0.1 right now: the OS picks it for a listener that closes at once.
 * A server started on it soon after almost always gets it; the helpers that use it retry on a clash.
 */
export async function freeLoopbackPort() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  await new Promise((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port assigned");
  return address.port;
}
