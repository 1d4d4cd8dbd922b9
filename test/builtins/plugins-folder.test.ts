import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import type { SkillExecution } from "@skillbox/core";
import { type LoadSkillsResult, loadSkills } from "@skillbox/loader";
import { createContainerRuntime } from "@skillbox/sandbox";
import { hasPodman } from "@skillbox/test-helpers/engine-availability";
import {
  createTemporaryDirectory,
  createTemporaryHost,
  type TemporaryHost,
} from "@skillbox/test-helpers/temporary-host";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repositoryJson } from "../../plugins/github/test/helpers/github-fixtures.js";

/**
 * The built-ins as users get them: the repository's `plugins/` folder loaded by the loader (bundles
 * included), configured only through environment variables, run through the executor.
 */
const pluginsFolder = resolve(import.meta.dirname, "../../plugins");

const BUILT_IN_SKILLS = [
  "a2a.send-message",
  "browser.extract",
  "browser.interact",
  "browser.screenshot",
  "echo",
  "file-workspace",
  "github.commit-activity",
  "github.contributors",
  "github.issues",
  "github.pull-requests",
  "github.releases",
  "github.repository",
  "http-request",
  "run-code",
];

let host: TemporaryHost;
let loaded: LoadSkillsResult;
let workspaceRoot: string;
const servers: Server[] = [];
const savedEnvironment = { ...process.env };

beforeEach(async () => {
  workspaceRoot = createTemporaryDirectory("skillbox-workspaces-");
  host = createTemporaryHost({ runtimes: [createContainerRuntime()] });
  loaded = await loadSkills({
    dirs: [pluginsFolder],
    npm: false,
    registry: host.registry,
    executor: host.executor,
  });
});

afterEach(async () => {
  process.env = { ...savedEnvironment };
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
  loaded.loader.close();
  await host.dispose();
});

/** A loopback server answering every request with `answer`, recording the request headers. */
async function serve(answer: {
  status?: number;
  body: unknown;
}): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers);
    response.writeHead(answer.status ?? 200, { "content-type": "application/json" });
    response.end(JSON.stringify(answer.body));
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function succeeded(execution: SkillExecution): unknown {
  expect(execution.error).toBeNull();
  expect(execution.status).toBe("success");
  return execution.output;
}

describe("the built-in plugins folder", () => {
  it("loads every built-in skill, bundle members included, with no failures", () => {
    expect(loaded.failed).toEqual([]);
    const names = new Set(host.registry.list().map((skill) => skill.name));
    for (const name of BUILT_IN_SKILLS) expect(names, name).toContain(name);
  });

  it("file-workspace keeps each owner's files under SKILLBOX_WORKSPACE_DIR", async () => {
    process.env.SKILLBOX_WORKSPACE_DIR = workspaceRoot;
    const write = { operation: "write", path: "notes/today.txt", content: "remember the milk" };
    succeeded(await host.executor.execute("file-workspace", write, { apiKeyId: "alice" }));
    expect(readFileSync(join(workspaceRoot, "alice", "notes", "today.txt"), "utf8")).toBe(
      "remember the milk",
    );
    const read = await host.executor.execute(
      "file-workspace",
      { operation: "read", path: "notes/today.txt" },
      { apiKeyId: "bob" },
    );
    expect(read.status).toBe("error");
    expect(read.error?.code).toBe("FILE_NOT_FOUND");
  });

  it("http-request refuses loopback until SKILLBOX_HTTP_ALLOW_PRIVATE allows it", async () => {
    const target = await serve({ body: { ok: true } });
    const refused = await host.executor.execute("http-request", { url: `${target.url}/ping` });
    expect(refused.error?.code).toBe("URL_REFUSED");
    expect(target.seen).toHaveLength(0);

    process.env.SKILLBOX_HTTP_ALLOW_PRIVATE = "127.0.0.1";
    const output = succeeded(await host.executor.execute("http-request", { url: `${target.url}/ping` }));
    expect(output).toMatchObject({ status: 200, json: { ok: true } });
  });

  it("github.repository reads its API base and token from the environment, and keeps the token out of the audit trail", async () => {
    const github = await serve({ body: repositoryJson({ stargazers_count: 7 }) });
    process.env.SKILLBOX_GITHUB_API_URL = github.url;
    process.env.SKILLBOX_GITHUB_TOKEN = "ghp_secret_token_for_tests";
    const execution = await host.executor.execute("github.repository", { owner: "octo", repo: "demo" });
    expect(succeeded(execution)).toMatchObject({ fullName: "octo/demo", stars: 7 });
    expect(github.seen[0]?.authorization).toBe("Bearer ghp_secret_token_for_tests");
    const stored = await host.executor.getExecution(execution.id);
    expect(JSON.stringify(stored)).not.toContain("ghp_secret_token_for_tests");
  });

  it.runIf(hasPodman() || process.env.CI)(
    "run-code runs the loaded folder's handler in a container",
    async () => {
      const execution = await host.executor.execute("run-code", {
        language: "javascript",
        code: "console.log(6 * 7)",
      });
      expect(succeeded(execution)).toMatchObject({ stdout: "42\n", exitCode: 0, timedOut: false });
      expect(existsSync(join(pluginsFolder, "run-code", "node_modules", ".skillbox-snapshots"))).toBe(true);
    },
  );
});
