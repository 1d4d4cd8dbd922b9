import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type LoadSkillsResult, loadSkills } from "@skillbox/loader";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

const run = promisify(execFile);

/** The example package another project would install from npm. */
const examplePackage = fileURLToPath(new URL("../../../examples/npm-skill-package", import.meta.url));
const exampleManifest = JSON.parse(readFileSync(join(examplePackage, "package.json"), "utf8")) as {
  name: string;
  version: string;
  description: string;
};

/** Environment for npm: no update check, no network, a private cache inside the temp tree. */
function npmEnvironment(cache: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    npm_config_update_notifier: "false",
    npm_config_cache: cache,
    npm_config_offline: "true",
  };
}

/** Packs `directory` into `destination` with pnpm (npm when pnpm is missing) and returns the tarball's path. */
async function pack(directory: string, destination: string, environment: NodeJS.ProcessEnv): Promise<string> {
  try {
    await run("pnpm", ["pack", "--pack-destination", destination], { cwd: directory, env: environment });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await run("npm", ["pack", "--pack-destination", destination], { cwd: directory, env: environment });
  }
  const tarball = readdirSync(destination).find((file) => file.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`packing ${directory} produced no tarball in ${destination}`);
  return join(destination, tarball);
}

let packages: TemporaryTree;
let tarball: string;

beforeAll(async () => {
  packages = createTemporaryTree("skillbox-npm-");
  tarball = await pack(
    examplePackage,
    packages.mkdir("tarballs"),
    npmEnvironment(packages.path("npm-cache")),
  );
});

afterAll(() => {
  packages?.cleanup();
});

describe("an npm-published skill package", () => {
  let project: TemporaryTree;
  let host: TemporaryHost;
  const results: LoadSkillsResult[] = [];

  /** `npm <args>` in the temp project, offline. */
  const npm = (...args: string[]) =>
    run("npm", [...args, "--offline", "--no-audit", "--no-fund"], {
      cwd: project.root,
      env: npmEnvironment(packages.path("npm-cache")),
    });

  const load = async () => {
    const result = await loadSkills({
      dirs: [],
      projectRoot: project.root,
      registry: host.registry,
      executor: host.executor,
    });
    results.push(result);
    return result;
  };

  beforeEach(async () => {
    project = createTemporaryTree("skillbox-project-");
    project.write("package.json", { name: "temp-project", version: "0.0.0", private: true });
    host = createTemporaryHost();
    await npm("install", tarball);
  });

  afterEach(async () => {
    for (const result of results.splice(0)) result.loader.close();
    await host.dispose();
    project.cleanup();
  });

  it("installs from its tarball with no dependencies and only its published files", () => {
    const installed = project.path("node_modules", exampleManifest.name);
    expect(readdirSync(installed).sort()).toEqual([
      "LICENSE",
      "README.md",
      "index.d.ts",
      "index.js",
      "package.json",
    ]);
    expect(existsSync(project.path("node_modules", ".package-lock.json"))).toBe(true);
    expect(readdirSync(project.path("node_modules")).filter((entry) => !entry.startsWith("."))).toEqual([
      "@acme",
    ]);
  });

  it("is discovered in node_modules and registered with name, version and description from package.json", async () => {
    const report = await load();

    expect(report.failed).toEqual([]);
    expect(report.loaded).toEqual([
      {
        kind: "skill",
        name: exampleManifest.name,
        version: exampleManifest.version,
        root: project.path("node_modules", exampleManifest.name),
        skillId: expect.any(String),
      },
    ]);
    const skill = host.registry.getSkill(`${exampleManifest.name}@^1`);
    expect(skill).toMatchObject({
      description: exampleManifest.description,
      apiKeyId: "system",
      source: project.path("node_modules", exampleManifest.name),
      tags: ["weather", "demo"],
      timeoutMs: 5000,
    });
  });

  it("executes, validating its input and output against the schemas in package.json", async () => {
    await load();

    const execution = await host.executor.execute(`${exampleManifest.name}@^1`, { city: "Lisbon", days: 2 });

    expect(execution.error).toBeNull();
    expect(execution.status).toBe("success");
    expect(execution.output).toMatchObject({ city: "Lisbon", unit: "celsius" });
    expect(execution.output.forecast).toHaveLength(2);
    const again = await host.executor.execute(exampleManifest.name, { city: " lisbon ", days: 2 });
    expect(again.output.forecast).toEqual(execution.output.forecast);

    const fahrenheit = await host.executor.execute(exampleManifest.name, {
      city: "Oslo",
      unit: "fahrenheit",
    });
    expect(fahrenheit.output).toMatchObject({ unit: "fahrenheit" });
    expect(fahrenheit.output.forecast).toHaveLength(3);

    const invalid = await host.executor.execute(exampleManifest.name, { days: 2 });
    expect(invalid.status).toBe("error");
    expect(invalid.error?.code).toBe("INPUT_INVALID");
  });

  it("is not discovered when npm discovery is off", async () => {
    const result = await loadSkills({
      dirs: [],
      npm: false,
      projectRoot: project.root,
      registry: host.registry,
      executor: host.executor,
    });
    results.push(result);
    expect(result.loaded).toEqual([]);
  });

  it("is unregistered on the next load after it is uninstalled", async () => {
    await load();
    await npm("uninstall", exampleManifest.name);

    const report = await load();

    expect(report.removed.map((entry) => entry.name)).toEqual([exampleManifest.name]);
    expect(host.registry.getSkill(exampleManifest.name)).toBeUndefined();
  });

  it("is not rewritten when loaded again unchanged", async () => {
    await load();
    const before = host.registry.getSkill(exampleManifest.name);
    await load();
    const after = host.registry.getSkill(exampleManifest.name);
    expect(after?.updatedAt).toBe(before?.updatedAt);
    expect(after?.contentHash).toBe(before?.contentHash);
  });
});
