import { AddressRefusedError, createAddressPolicy } from "@skillbox/core";
import { fetch } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { createGuardedAgent, type GuardedAgent } from "../lib/guarded-agent.ts";
import { type RecordingServer, startRecordingServer } from "./helpers/recording-server.js";

const servers: RecordingServer[] = [];
const agents: GuardedAgent[] = [];

afterEach(async () => {
  for (const guarded of agents.splice(0)) await guarded.agent.destroy();
  for (const server of servers.splice(0)) await server.close();
});

async function serve(): Promise<RecordingServer> {
  const server = await startRecordingServer((_request, response) => response.end("ok"));
  servers.push(server);
  return server;
}

function guardedAgent(allowPrivate: string[]): GuardedAgent {
  const guarded = createGuardedAgent(createAddressPolicy(allowPrivate));
  agents.push(guarded);
  return guarded;
}

/** The cause chain of a fetch failure, flattened. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null; current = (current as Error).cause) {
    chain.push(current);
  }
  return chain;
}

// These go around the URL check on purpose: the agent alone must refuse, at connect time, so a
// host that resolves differently later (DNS rebinding) or a redirect hop cannot get past it.
describe("createGuardedAgent", () => {
  it("refuses an IP literal in a private range when connecting", async () => {
    const server = await serve();
    const guarded = guardedAgent([]);
    const failure = await fetch(server.origin, { dispatcher: guarded.agent }).catch(
      (error: unknown) => error,
    );
    expect(causes(failure).some((cause) => cause instanceof AddressRefusedError)).toBe(true);
    expect(guarded.refusal()).toEqual({ host: "127.0.0.1", address: "127.0.0.1", range: "loopback" });
    expect(server.connections).toBe(0);
  });

  it("refuses a host name whose resolved address is private, after resolving it and before connecting", async () => {
    const server = await serve();
    const guarded = guardedAgent([]);
    const failure = await fetch(`http://localhost:${server.port}/`, { dispatcher: guarded.agent }).catch(
      (error: unknown) => error,
    );
    expect(causes(failure).some((cause) => cause instanceof AddressRefusedError)).toBe(true);
    expect(guarded.refusal()).toMatchObject({ host: "localhost", range: "loopback" });
    expect(server.connections).toBe(0);
  });

  it("connects to allowed addresses and host names", async () => {
    const server = await serve();
    const byAddress = await fetch(server.origin, { dispatcher: guardedAgent(["127.0.0.1"]).agent });
    expect(await byAddress.text()).toBe("ok");
    const byName = await fetch(`http://localhost:${server.port}/`, {
      dispatcher: guardedAgent(["localhost"]).agent,
    });
    expect(await byName.text()).toBe("ok");
  });
});
