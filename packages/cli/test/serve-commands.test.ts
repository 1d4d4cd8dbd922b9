import { type CliProject, createCliProject, type RunningCli } from "@skillbox/test-helpers/cli-process";
import { makeSymlinkRing } from "@skillbox/test-helpers/symlink-ring";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
  project.tree.writeFolder("plugins/echo", echoFolder());
});

afterEach(async () => {
  await project.cleanup();
});

const LISTENING = /listening\s+(http:\/\/[^\s]+) \(MCP at /;

async function execute(url: string, name: string, input: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/api/skills/${name}/execute`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ input }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Runs echo, edits its handler, waits for `dev` to log the reload and checks the edited code answers. */
async function expectHotReload(server: RunningCli, url: string): Promise<void> {
  expect((await execute(url, "echo", { msg: "v1" })).body).toMatchObject({ output: { echoed: "v1" } });
  project.tree.write(
    "plugins/echo/index.ts",
    'export default (input: any) => ({ echoed: input.msg + " (v2)" });\n',
  );
  await server.waitForOutput(/reloaded\s+skill echo@1\.0\.0/);
  expect((await execute(url, "echo", { msg: "hi" })).body).toMatchObject({ output: { echoed: "hi (v2)" } });
}

describe("skillbox serve", { timeout: 60_000 }, () => {
  it("prints the URL it listens on (--port 0), answers /health, logs executions, and stops on SIGTERM", async () => {
    const server = project.start(["serve", "--port", "0"]);
    const [, url] = await server.waitForOutput(LISTENING);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok" });
    const card = await fetch(`${url}/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
    const { skills } = (await card.json()) as { skills: { id: string }[] };
    expect(skills.map((skill) => skill.id)).toContain("echo");
    const { body } = await execute(url!, "echo", { msg: "over http" });
    expect(body).toMatchObject({ status: "success", output: { echoed: "over http" } });
    await server.waitForOutput(/executed\s+echo@1\.0\.0 → success/);

    const stopped = await server.stop("SIGTERM");
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(/loaded\s+skill echo@1\.0\.0/);
    expect(stopped.stdout).toMatch(/stopping\s+SIGTERM/);
    expect(stopped.stdout).toMatch(/stopped/);
  });

  it("takes the port from SKILLBOX_PORT and API keys from SKILLBOX_API_KEYS", async () => {
    const server = project.start(["serve"], {
      env: { SKILLBOX_PORT: "0", SKILLBOX_API_KEYS: "secret-key:acme" },
    });
    const [, url] = await server.waitForOutput(LISTENING);
    expect(server.stdout()).not.toContain("no API keys configured");
    expect((await execute(url!, "echo", { msg: "x" })).status).toBe(401);
    const authorized = await execute(url!, "echo", { msg: "x" }, { authorization: "Bearer secret-key" });
    expect(authorized.body).toMatchObject({ status: "success", apiKeyId: "acme" });
    expect((await server.stop("SIGINT")).code).toBe(0);
  });

  it("exits 1 with the server's error code when the port is taken", async () => {
    const first = project.start(["serve", "--port", "0"]);
    const [, url] = await first.waitForOutput(LISTENING);
    const port = new URL(url!).port;
    const second = await project.run(["serve", "--port", port]);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/^error SERVER_LISTEN_FAILED: /m);
    expect((await first.stop()).code).toBe(0);
  });
});

describe("skillbox dev", { timeout: 60_000 }, () => {
  it("warns naming a folder that does not exist and serves none of the skills earlier runs loaded", async () => {
    const earlier = project.start(["serve", "--port", "0"]);
    await earlier.waitForOutput(LISTENING);
    expect((await earlier.stop()).stdout).toMatch(/loaded\s+skill echo@1\.0\.0/);

    const server = project.start(["dev", "does-not-exist", "--port", "0"]);
    const [, url] = await server.waitForOutput(LISTENING);

    expect(server.stdout()).toMatch(/serving\s+0 skill version\(s\) from does-not-exist/);
    const listed = (await (await fetch(`${url}/api/skills`)).json()) as { skills: unknown[] };
    expect(listed.skills).toEqual([]);
    expect((await execute(url!, "echo", { msg: "x" })).status).toBe(404);
    const stopped = await server.stop();
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toMatch(/^warning FOLDER_NOT_FOUND: does-not-exist: no such folder/m);
  });

  it("serves a package with three symlinks to `.`, names each link, reloads an edit, and exits on SIGTERM", async () => {
    // Those links used to be followed without end: memory grew past 2 GB and SIGTERM was ignored.
    for (const name of ["loop-a", "loop-b", "loop-c"]) project.tree.symlink(".", `plugins/echo/${name}`);
    const server = project.start(["dev", "--port", "0"]);
    const [, url] = await server.waitForOutput(LISTENING);
    await expectHotReload(server, url!);

    const stopped = await server.stop("SIGTERM");
    expect(stopped.code).toBe(0);
    const warnings = stopped.stderr.match(/^warning SYMLINK_LOOP: plugins\/echo\/loop-[abc]: /gm) ?? [];
    expect(warnings).toHaveLength(3);
  });

  it("serves a package holding a ring of 8 folders with 3 links each, reloads an edit, and exits on SIGTERM", async () => {
    // Loops caught per path alone: 3^8 paths, not listening after 80 s at 550 MB, SIGTERM ignored.
    makeSymlinkRing(project.tree, { folder: "plugins/echo", length: 8, linksPerFolder: 3 });
    const server = project.start(["dev", "--port", "0"]);
    const [, url] = await server.waitForOutput(LISTENING);
    await expectHotReload(server, url!);

    const stopped = await server.stop("SIGTERM");
    expect(stopped.code).toBe(0);
    // Every link reaches a folder watched by its own path: nothing is left out, nothing to warn.
    expect(stopped.stderr.match(/^warning /gm) ?? []).toEqual([]);
  });

  it("hot-reloads an edited handler and logs reloads and errors live", async () => {
    const server = project.start(["dev", "--port", "0"]);
    const [, url] = await server.waitForOutput(LISTENING);
    await expectHotReload(server, url!);

    project.tree.write("plugins/echo/skill.json", "{ not json");
    await server.waitForOutput(/error\s+MANIFEST_INVALID: plugins\/echo\/skill\.json: is not valid JSON/);
    // The last good version keeps serving.
    expect((await execute(url!, "echo", { msg: "still" })).body).toMatchObject({
      output: { echoed: "still (v2)" },
    });

    const stopped = await server.stop("SIGINT");
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toMatch(/stopped/);
  });
});

describe("skillbox serve: MCP session bounds", { timeout: 60_000 }, () => {
  const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };

  /** Sends an MCP `initialize`; a session's event stream (GET) is then opened and kept, so it stays in use. */
  async function openSession(url: string): Promise<{ status: number; text: string; stream?: Response }> {
    const response = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: mcpHeaders,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-03-26",
          capabilities: {},
          clientInfo: { name: "cli-test", version: "1" },
        },
      }),
    });
    const text = await response.text();
    const sessionId = response.headers.get("mcp-session-id");
    if (sessionId === null) return { status: response.status, text };
    const stream = await fetch(`${url}/mcp`, {
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-03-26",
      },
    });
    expect(stream.status).toBe(200);
    return { status: response.status, text, stream };
  }

  it("takes server.mcp limits from the config file, SKILLBOX_MCP_… variables over them", async () => {
    project.tree.write(
      "skillbox.config.mjs",
      "export default { server: { mcp: { maxSessionsPerOwner: 1 } } };\n",
    );
    const fromFile = project.start(["serve", "--port", "0"]);
    const [, fileUrl] = await fromFile.waitForOutput(LISTENING);
    const first = await openSession(fileUrl!);
    expect(first.status).toBe(200);
    const refused = await openSession(fileUrl!);
    expect(refused.status).toBe(429);
    expect(refused.text).toContain("limit 1, all in use");
    await first.stream?.body?.cancel();
    expect((await fromFile.stop("SIGTERM")).code).toBe(0);

    const fromEnvironment = project.start(["serve", "--port", "0"], {
      env: { SKILLBOX_MCP_MAX_SESSIONS_PER_OWNER: "2" },
    });
    const [, url] = await fromEnvironment.waitForOutput(LISTENING);
    const opened = [await openSession(url!), await openSession(url!)];
    expect(opened.map((session) => session.status)).toEqual([200, 200]);
    const third = await openSession(url!);
    expect(third.status).toBe(429);
    expect(third.text).toContain("limit 2, all in use");
    for (const session of opened) await session.stream?.body?.cancel();
    expect((await fromEnvironment.stop("SIGTERM")).code).toBe(0);
  });

  /**
   * Runs echo over A2A (JSON-RPC v0.3) with a `bytes`-long message, then reads its task back from
   * a v1.0 `ListTasks` page, where `maxBytesPerTask` applies (as JSON text: the parts' shapes vary by version).
   */
  async function echoTaskOverA2a(url: string, bytes: number): Promise<string> {
    const rpc = async (method: string, params: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${url}/a2a`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: the test reads fields of a JSON-RPC result.
      return ((await response.json()) as { result: Record<string, any> }).result;
    };
    const sent = await rpc("message/send", {
      message: {
        kind: "message",
        role: "user",
        messageId: "m1",
        parts: [{ kind: "data", data: { msg: "e".repeat(bytes) } }],
        metadata: { skill: "echo" },
      },
    });
    expect(sent.status.state).toBe("completed");
    const page = await rpc("ListTasks", { includeArtifacts: true }, { "A2A-Version": "1.0" });
    const task = page.tasks.find((listed: { id: string }) => listed.id === sent.id);
    return JSON.stringify(task);
  }

  it("takes server.a2a limits from the config file, SKILLBOX_A2A_… variables over them", async () => {
    project.tree.write(
      "skillbox.config.mjs",
      "export default { server: { a2a: { maxBytesPerTask: 4096 } } };\n",
    );
    const fromFile = project.start(["serve", "--port", "0"]);
    const [, fileUrl] = await fromFile.waitForOutput(LISTENING);
    const cut = await echoTaskOverA2a(fileUrl!, 3000);
    // The 4 KiB page cannot hold both copies of the 3000 characters: the output points elsewhere.
    expect(cut).toContain('"omitted"');
    expect(cut).not.toContain(`"echoed":"${"e".repeat(3000)}"`);
    expect((await fromFile.stop("SIGTERM")).code).toBe(0);

    const fromEnvironment = project.start(["serve", "--port", "0"], {
      env: { SKILLBOX_A2A_MAX_BYTES_PER_TASK: "65536" },
    });
    const [, url] = await fromEnvironment.waitForOutput(LISTENING);
    const whole = await echoTaskOverA2a(url!, 3000);
    expect(whole).not.toContain('"omitted"');
    expect(whole).toContain("e".repeat(3000));
    expect((await fromEnvironment.stop("SIGTERM")).code).toBe(0);

    const refused = await project.run(["serve", "--port", "0"], {
      env: { SKILLBOX_A2A_MAX_TASK_BYTES: "lots" },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /CONFIG_INVALID.*SKILLBOX_A2A_MAX_TASK_BYTES must be a number of bytes, got "lots"/,
    );
  });

  it("refuses malformed limits naming the variable or the field", async () => {
    const variable = await project.run(["serve", "--port", "0"], {
      env: { SKILLBOX_MCP_MAX_SESSIONS: "many" },
    });
    expect(variable.code).toBe(1);
    expect(variable.stderr).toMatch(
      /CONFIG_INVALID.*SKILLBOX_MCP_MAX_SESSIONS must be a number of sessions, got "many"/,
    );

    project.tree.write(
      "skillbox.config.mjs",
      "export default { server: { mcp: { maxSessions: 0, sessionIdleTimeoutMs: 1.5, idle: 1 } } };\n",
    );
    const field = await project.run(["serve", "--port", "0"]);
    expect(field.code).toBe(1);
    expect(field.stderr).toContain(
      "skillbox.config.mjs: `server.mcp.maxSessions` must be at least 1 session",
    );
    expect(field.stderr).toContain(
      "skillbox.config.mjs: `server.mcp.sessionIdleTimeoutMs` must be a whole number of milliseconds",
    );
    expect(field.stderr).toContain("skillbox.config.mjs: unknown field `server.mcp.idle`");
  });
});
