import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";

const execute = promisify(execFile);

/** Where each package a sample may import is installed, relative to the repository. */
const LINKED_PACKAGES: Record<string, string> = {
  "@skillbox/core": "packages/core",
  "@skillbox/loader": "packages/loader",
  "@skillbox/sandbox": "packages/sandbox",
  "@skillbox/server": "packages/server",
  "@skillbox/studio": "packages/studio",
  "@skillbox/llm": "packages/llm",
  "@skillbox/distributed": "packages/distributed",
  skillbox: "packages/cli",
  "@acme/skill-weather": "examples/npm-skill-package",
  zod: "packages/core/node_modules/zod",
  openai: "packages/llm/node_modules/openai",
  hono: "packages/server/node_modules/hono",
  jiti: "packages/loader/node_modules/jiti",
  "@types/node": "node_modules/@types/node",
};

/** Folders of a README's folder that are not linked into its sample folder. */
const UNLINKED_FOLDERS = new Set(["node_modules", ".git", ".skillbox", "dist"]);

/** Imports a sample through jiti (as `npx jiti sample.ts` does), then ends whatever it left open. */
const RUNNER = `import { createJiti } from "jiti";
// tryNative: the workspace packages' built JavaScript loads natively; only TypeScript goes through jiti.
const jiti = createJiti(import.meta.url, { tryNative: true });
await jiti.import(process.argv[2]);
// Servers, watchers and databases a sample opens end with it: the test stops what it starts.
process.exit(0);
`;

/** A temporary project outside the workspace, wired to the workspace packages like an install. */
export interface SampleProject {
  root: string;
  /**
   * The folder where the samples of the README in `readmeFolder` (relative) are written and run.
   * Its `plugins/` holds the `echo` skill and the first-party plugins named in `plugins`.
   */
  folderFor(readmeFolder: string, plugins: Iterable<string>): string;
  /** Typechecks `files` with the workspace's tsc and a user's strict tsconfig; resolves with tsc's output. */
  typecheck(files: string[]): Promise<{ ok: boolean; output: string }>;
  /** Runs one sample file with jiti in its folder, on a database of its own. */
  run(file: string): Promise<{ ok: boolean; output: string }>;
}

export function createSampleProject(repositoryRoot: string, root: string): SampleProject {
  mkdirSync(join(root, "node_modules", "@skillbox"), { recursive: true });
  mkdirSync(join(root, "node_modules", "@acme"), { recursive: true });
  mkdirSync(join(root, "node_modules", "@types"), { recursive: true });
  for (const [name, target] of Object.entries(LINKED_PACKAGES)) {
    symlinkSync(realpathSync(join(repositoryRoot, target)), join(root, "node_modules", name), "dir");
  }
  writeFileSync(join(root, "package.json"), JSON.stringify({ private: true, type: "module" }));
  writeFileSync(join(root, "run-sample.mjs"), RUNNER);
  const folders = new Map<string, string>();

  return {
    root,
    folderFor(readmeFolder, plugins) {
      const existing = folders.get(readmeFolder);
      if (existing !== undefined) return existing;
      const folder = join(root, readmeFolder === "" ? "root" : readmeFolder.replaceAll("/", "-"));
      mkdirSync(folder);
      // A project's `./plugins`: echo, and what the samples import (`./plugins/a2a/index.ts`) —
      // not all first-party plugins, which would make every loader sample load fifteen packages.
      mkdirSync(join(folder, "plugins"));
      for (const name of new Set(["echo", ...plugins])) {
        symlinkSync(join(repositoryRoot, "plugins", name), join(folder, "plugins", name), "dir");
      }
      // Samples import files next to their README (`./timing/index.ts`), or folders of the
      // repository's root: the README's folder wins.
      // The project's node_modules, where the loader looks for installed skill packages.
      symlinkSync(join(root, "node_modules"), join(folder, "node_modules"), "dir");
      const linked = new Set<string>(["node_modules", "plugins"]);
      for (const source of [join(repositoryRoot, readmeFolder), repositoryRoot]) {
        for (const entry of readdirSync(source, { withFileTypes: true })) {
          if (!entry.isDirectory() || UNLINKED_FOLDERS.has(entry.name) || linked.has(entry.name)) continue;
          symlinkSync(join(source, entry.name), join(folder, entry.name), "dir");
          linked.add(entry.name);
        }
      }
      folders.set(readmeFolder, folder);
      return folder;
    },
    async typecheck(files) {
      const tsconfig = {
        compilerOptions: {
          target: "ES2023",
          lib: ["ES2023"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          allowJs: true,
          checkJs: true,
          types: ["node"],
        },
        files: files.map((file) => relative(root, file)),
      };
      writeFileSync(join(root, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
      const tsc = join(repositoryRoot, "node_modules", "typescript", "bin", "tsc");
      try {
        const { stdout } = await execute(process.execPath, [tsc, "-p", join(root, "tsconfig.json")], {
          cwd: root,
          maxBuffer: 16 * 1024 * 1024,
        });
        return { ok: true, output: stdout };
      } catch (error) {
        const failure = error as { stdout?: string; stderr?: string; message: string };
        return { ok: false, output: `${failure.stdout ?? ""}${failure.stderr ?? failure.message}` };
      }
    },
    async run(file) {
      const folder = dirname(file);
      try {
        const running = execute(process.execPath, [join(root, "run-sample.mjs"), file], {
          cwd: folder,
          env: sampleEnvironment(root, file),
          timeout: 45_000,
          maxBuffer: 16 * 1024 * 1024,
        });
        // A sample reading stdin (an MCP server on stdio) sees it closed, as when its client goes.
        running.child.stdin?.end();
        const { stdout, stderr } = await running;
        return { ok: true, output: `${stdout}${stderr}` };
      } catch (error) {
        const failure = error as { stdout?: string; stderr?: string; message: string };
        return { ok: false, output: `${failure.message}\n${failure.stdout ?? ""}${failure.stderr ?? ""}` };
      }
    },
  };
}

/** The environment of a sample: its own database and workspace, nothing from a developer's host. */
function sampleEnvironment(root: string, file: string): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    SKILLBOX_DB: `${file}.db`,
    SKILLBOX_WORKSPACE_DIR: join(root, "workspaces"),
    NODE_OPTIONS: "",
  };
  for (const name of ["SKILLBOX_API_KEYS", "SKILLBOX_PORT", "NODE_PATH", "VITEST", "VITEST_POOL_ID"]) {
    delete environment[name];
  }
  return environment;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Replaces the port the docs use (3000) with `port`, so that samples never collide with a running host. */
export function withPort(code: string, port: number): string {
  return code
    .replaceAll(/\b(localhost|127\.0\.0\.1):3000\b/g, `$1:${port}`)
    .replaceAll(/\bport: 3000\b/g, `port: ${port}`);
}

/** A `skillbox serve` host over the repository's plugins, for `host` samples. */
export interface SampleHost {
  port: number;
  stop(): Promise<void>;
}

/** Starts `skillbox serve` (the built CLI) on a free port and resolves once it answers. */
export async function startSampleHost(options: {
  repositoryRoot: string;
  database: string;
  environment: Record<string, string>;
}): Promise<SampleHost> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [join(options.repositoryRoot, "packages/cli/bin/skillbox.mjs"), "serve", "--port", String(port)],
    {
      cwd: options.repositoryRoot,
      env: { ...sampleEnvironment(dirname(options.database), options.database), ...options.environment },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  let alive = true;
  void exited.then(() => {
    alive = false;
  });
  // Waits for the host to answer (not a timed assertion: it fails only if the host exits or never comes up).
  for (let tries = 0; tries < 600; tries++) {
    if (!alive) throw new Error(`skillbox serve exited before it answered:\n${output}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      await response.body?.cancel();
      if (response.status < 500) return { port, stop };
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`skillbox serve did not answer on port ${port}:\n${output}`);
}

/** Runs a shell sample with bash (`set -euo pipefail`; `curl` fails on HTTP errors) in `folder`. */
export async function runShellSample(options: {
  code: string;
  folder: string;
  repositoryRoot: string;
  database: string;
}): Promise<{ ok: boolean; output: string }> {
  const script = [
    "set -euo pipefail",
    // An HTTP error answer fails the sample instead of printing a body nobody reads.
    'curl() { command curl --silent --show-error --fail-with-body "$@"; }',
    options.code,
  ].join("\n");
  const environment = sampleEnvironment(dirname(options.database), options.database);
  environment.PATH = `${join(options.repositoryRoot, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;
  try {
    const running = execute("bash", ["-c", script], {
      cwd: options.folder,
      env: environment,
      timeout: 45_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    running.child.stdin?.end();
    const { stdout, stderr } = await running;
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${failure.message}\n${failure.stdout ?? ""}${failure.stderr ?? ""}` };
  }
}
