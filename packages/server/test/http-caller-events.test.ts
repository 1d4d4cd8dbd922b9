import { type SkillWatcher, watchSkills } from "@skillbox/loader";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, describe, expect, it } from "vitest";
import { type ActivitySource, createLoaderActivity, type LoaderActivityFeed } from "../src/index.js";
import { EventStreamReader, type ServerSentEvent } from "./http-event-stream-reader.js";
import { echoSkill, type TestApi, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const KEYS = { "alice-key": "alice", "bob-key": "bob" };

const readers: EventStreamReader[] = [];
const trees: TemporaryTree[] = [];
const watchers: SkillWatcher[] = [];
afterEach(async () => {
  for (const reader of readers.splice(0)) await reader.cancel().catch(() => undefined);
  for (const watcher of watchers.splice(0)) await watcher.close();
  for (const tree of trees.splice(0)) tree.cleanup();
});

/** Opens `GET /api/events` and reads up to its `ready` event (from then on, nothing is missed). */
async function openEvents(
  api: TestApi,
  options: { key?: string; query?: string } = {},
): Promise<EventStreamReader> {
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const response = await fetch(`${api.server.url}/api/events${options.query ?? ""}`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const reader = new EventStreamReader(response);
  readers.push(reader);
  await reader.until("ready");
  return reader;
}

/** The next event that is not a heartbeat. */
async function nextEvent(reader: EventStreamReader): Promise<ServerSentEvent> {
  for (;;) {
    const event = await reader.next();
    if (event === undefined) throw new Error("The stream ended");
    if (event.comment === undefined) return event;
  }
}

/** Reads until an `activity` event of `type`. */
async function untilActivity(reader: EventStreamReader, type: string): Promise<ServerSentEvent> {
  for (;;) {
    const { event } = await reader.until("activity");
    if (event.data.type === type) return event;
  }
}

async function runEcho(api: TestApi, key: string | undefined, msg: string, skill = "echo"): Promise<string> {
  const { status, body } = await api.call("POST", `/api/skills/${skill}/execute`, {
    key,
    json: { input: { msg } },
  });
  expect(status).toBe(200);
  return body.id;
}

/** One activity source of two feeds, as a host with loaders of two owners would give. */
function bothFeeds(first: LoaderActivityFeed, second: LoaderActivityFeed): ActivitySource {
  return {
    subscribe(listener) {
      const stopFirst = first.subscribe(listener);
      const stopSecond = second.subscribe(listener);
      return () => {
        stopFirst();
        stopSecond();
      };
    },
  };
}

describe("createHttpApp: GET /api/events", () => {
  it("streams the caller's executions, status to finished, and none of another owner's", async () => {
    const api = await startApi({ apiKeys: KEYS });
    api.host.registry.register(echoSkill());
    const alice = await openEvents(api, { key: "alice-key" });
    const bob = await openEvents(api, { key: "bob-key" });

    const aliceId = await runEcho(api, "alice-key", "private");
    const bobId = await runEcho(api, "bob-key", "mine");
    const aliceFinished = await alice.until("finished");
    const bobFirst = await nextEvent(bob);
    const bobFinished = await bob.until("finished");

    expect(aliceFinished.event.data).toMatchObject({
      type: "finished",
      executionId: aliceId,
      execution: { id: aliceId, status: "success", output: { echoed: "private" } },
    });
    expect(aliceFinished.event.id).toBeUndefined();
    // Bob's stream starts with his own execution: alice's, which ran first, never reached it.
    expect(bobFirst.data.executionId).toBe(bobId);
    expect(bobFinished.event.data.execution).toMatchObject({ id: bobId, apiKeyId: "bob" });
    expect(JSON.stringify([bobFirst, ...bobFinished.skipped])).not.toContain(aliceId);
  });

  it("keeps the events of one skill with ?skill=", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    api.host.registry.register(echoSkill({ name: "other" }));
    const reader = await openEvents(api, { query: "?skill=echo&kinds=executions" });

    await runEcho(api, undefined, "skipped", "other");
    const echoId = await runEcho(api, undefined, "kept");
    const first = await nextEvent(reader);

    expect(first.data).toMatchObject({ executionId: echoId });
    expect(first.data.execution ?? {}).not.toMatchObject({ skillName: "other" });
  });

  it("answers an unknown kind with 400 naming the kinds", async () => {
    const api = await startApi();

    const { status, body } = await api.call("GET", "/api/events?kinds=executions,logs");

    expect(status).toBe(400);
    expect(body.error.message).toContain("executions, activity");
  });

  it("counts its streams against the per-owner cap shared with /api/executions/:id/events", async () => {
    const api = await startApi({ executionEvents: { maxStreamsPerOwner: 1 } });
    api.host.registry.register(echoSkill());
    const id = await runEcho(api, undefined, "done");
    await openEvents(api);

    const events = await api.call("GET", "/api/events");
    const executionEvents = await api.call("GET", `/api/executions/${id}/events`);

    expect(events.status).toBe(429);
    expect(events.body.error.code).toBe("RATE_LIMITED");
    expect(executionEvents.status).toBe(429);
  });

  it("frees its slot and its subscriptions when the client goes away", async () => {
    const activity = createLoaderActivity();
    // Live subscriptions now, and the most at once.
    const count = { live: 0, peak: 0 };
    const counted: ActivitySource = {
      subscribe(listener) {
        const stop = activity.subscribe(listener);
        count.live++;
        count.peak = Math.max(count.peak, count.live);
        return () => {
          count.live--;
          stop();
        };
      },
    };
    // No heartbeat during the test: a failed heartbeat write would also end an abandoned stream.
    const api = await startApi({
      activity: counted,
      executionEvents: { maxStreamsPerOwner: 1, heartbeatIntervalMs: 600_000 },
    });
    // The app itself may listen (the skills' load errors): count the streams' share only.
    const before = count.live;
    const first = await openEvents(api);
    await first.cancel();
    // Refused until the server has noticed the client left and ended the first stream.
    let again: Response;
    for (;;) {
      again = await fetch(`${api.server.url}/api/events`);
      if (again.status !== 429) break;
      await again.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const second = new EventStreamReader(again);
    readers.push(second);
    await second.until("ready");

    expect(again.status).toBe(200);
    // The first stream's subscription was given back before the second took its own.
    expect(count.live).toBe(before + 1);
    expect(count.peak).toBe(before + 1);
  });

  it("streams a real watcher's reloads and load errors (file and message), then the fix", async () => {
    const tree = createTemporaryTree();
    trees.push(tree);
    tree.linkPackages("@skillbox/core");
    tree.writeFolder("plugins/greet", {
      "skill.json": {
        name: "greet",
        version: "1.0.0",
        description: "Greets",
        input: { type: "object", properties: { msg: { type: "string" } } },
        handler: "./index.ts",
      },
      "index.ts": 'export default function handler() { return { reply: "one" }; }\n',
    });
    const activity = createLoaderActivity();
    const api = await startApi({ activity });
    const watcher = watchSkills({
      dirs: [tree.path("plugins")],
      npm: false,
      registry: api.host.registry,
      executor: api.host.executor,
    });
    watchers.push(watcher);
    watcher.on("loaded", (entry) => activity.loaded(entry));
    watcher.on("reloaded", (entry) => activity.reloaded(entry));
    watcher.on("removed", (entry) => activity.removed(entry));
    watcher.on("error", (failure) => activity.failed(failure));
    await watcher.ready();
    const reader = await openEvents(api, { query: "?kinds=activity" });

    tree.write("plugins/greet/index.ts", 'export default function handler() { return { reply: "two" }; }\n');
    const reloaded = await untilActivity(reader, "reloaded");
    tree.write("plugins/greet/index.ts", "export default function handler( {\n");
    const failed = await untilActivity(reader, "load-error");
    tree.write(
      "plugins/greet/index.ts",
      'export default function handler() { return { reply: "three" }; }\n',
    );
    const fixed = await untilActivity(reader, "reloaded");

    expect(reloaded.data).toMatchObject({
      type: "reloaded",
      owner: "system",
      package: { kind: "skill", name: "greet", version: "1.0.0", root: tree.path("plugins/greet") },
    });
    expect(Number.isNaN(Date.parse(reloaded.data.at))).toBe(false);
    expect(failed.data.failure).toMatchObject({ file: tree.path("plugins/greet/index.ts") });
    expect(failed.data.failure.code).toEqual(expect.any(String));
    expect(failed.data.failure.message.length).toBeGreaterThan(0);
    expect(fixed.data.package.name).toBe("greet");
  });

  it("sends a private loader's activity only to its owner, the global one to everyone", async () => {
    const aliceFeed = createLoaderActivity({ owner: "alice" });
    const globalFeed = createLoaderActivity({ displayPath: (path) => path.replace("/srv/", "") });
    const api = await startApi({ apiKeys: KEYS, activity: bothFeeds(aliceFeed, globalFeed) });
    const alice = await openEvents(api, { key: "alice-key", query: "?kinds=activity" });
    const bob = await openEvents(api, { key: "bob-key" });

    aliceFeed.failed({ root: "/srv/mine", file: "/srv/mine/index.ts", code: "X", message: "secret" });
    globalFeed.loaded({ kind: "interceptor", name: "audit", version: "1.0.0", root: "/srv/audit" });
    const aliceFirst = await nextEvent(alice);
    const aliceSecond = await nextEvent(alice);
    const bobFirst = await nextEvent(bob);

    expect(aliceFirst.data).toMatchObject({
      type: "load-error",
      owner: "alice",
      failure: { message: "secret" },
    });
    expect(aliceSecond.data).toMatchObject({
      type: "loaded",
      package: { kind: "interceptor", root: "audit" },
    });
    expect(bobFirst).toMatchObject({ event: "activity", data: { type: "loaded", owner: "system" } });
  });

  it("keeps a client that does not read to a bounded backlog and tells it what it missed", async () => {
    const activity = createLoaderActivity();
    const api = await startApi({ activity });
    const reader = await openEvents(api, { query: "?kinds=activity" });

    // In one turn: the stream writes nothing until all of them are in its buffer.
    for (let index = 0; index < 1000; index++) {
      activity.reloaded({ kind: "skill", name: "echo", version: `1.0.${index}`, root: "echo" });
    }
    const lagged = await nextEvent(reader);
    const oldestKept = await nextEvent(reader);

    expect(lagged).toMatchObject({ event: "lagged", data: { dropped: 1000 - 32 } });
    expect(oldestKept.data.package.version).toBe(`1.0.${1000 - 32}`);
  });

  it("leaves activity out with ?kinds=executions, and other skills' loads out with ?skill=", async () => {
    const activity = createLoaderActivity();
    const api = await startApi({ activity });
    api.host.registry.register(echoSkill());
    const executionsOnly = await openEvents(api, { query: "?kinds=executions" });
    const echoOnly = await openEvents(api, { query: "?skill=echo&kinds=activity" });

    activity.reloaded({ kind: "skill", name: "other", version: "1.0.0", root: "other" });
    activity.reloaded({ kind: "skill", name: "echo", version: "1.0.0", root: "echo" });
    const id = await runEcho(api, undefined, "hello");

    expect((await nextEvent(executionsOnly)).data.executionId).toBe(id);
    expect((await nextEvent(echoOnly)).data.package).toMatchObject({ name: "echo" });
  });

  it("shows a load error's message with the package's display path, not the host's absolute one", () => {
    const feed = createLoaderActivity({ displayPath: (path) => path.replace("/srv/app/", "") });
    const seen: unknown[] = [];
    feed.subscribe((activity) => seen.push(activity));

    feed.failed({
      root: "/srv/app/plugins/count",
      file: "/srv/app/plugins/count/index.ts",
      code: "HANDLER_INVALID",
      message:
        "plugins/count/index.ts: failed to load: ParseError: Unexpected token /srv/app/plugins/count/index.ts:1:56",
    });

    expect(seen).toEqual([
      expect.objectContaining({
        failure: {
          root: "plugins/count",
          file: "plugins/count/index.ts",
          code: "HANDLER_INVALID",
          message:
            "plugins/count/index.ts: failed to load: ParseError: Unexpected token plugins/count/index.ts:1:56",
        },
      }),
    ]);
  });
});
