import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  createProcessGroup,
  describeResult,
  type ProcessGroup,
  type ProcessResult,
} from "./child-processes.js";
import { localNativePrebuilds } from "./native-prebuilds.js";
import type { PackedPackages } from "./pack-public-packages.js";
import { userEnvironment } from "./user-environment.js";

/** How the packages get installed. */
export type InstallLayout = "npm" | "pnpm";

/** Options of {@link installProject}. */
export interface InstallProjectOptions {
  layout: InstallLayout;
  tarballs: PackedPackages;
  /** An empty folder outside any workspace (no `node_modules` or `package.json` above it). */
  root: string;
  /** Where npm's install may find prebuilt native packages ({@link localNativePrebuilds}). */
  prebuildsFolder: string;
}

/** How a command runs in the project. */
export interface ProjectCommandOptions {
  /** Relative to the project (default: the project itself). */
  cwd?: string;
  timeoutMs?: number;
  /** Added to the user's environment. */
  environment?: Record<string, string>;
}

/** A fresh project with the tarballs installed, as a user's would be. */
export interface InstalledProject {
  readonly layout: InstallLayout;
  readonly root: string;
  /** `node_modules/.bin/skillbox`: what `npx skillbox` / `pnpm exec skillbox` run. */
  readonly binary: string;
  /** How long the install took (reported, never asserted on). */
  readonly installDurationMs: number;
  /** Every process the project started; the test stops them in `afterAll`. */
  readonly processes: ProcessGroup;
  /** Absolute path of `relativePath` in the project. */
  path(...relativePath: string[]): string;
  /** Writes files (text as is, objects as JSON) under the project, creating folders. */
  write(files: Record<string, string | object>): void;
  /** Runs the installed `skillbox` with `args` and resolves once it exited. */
  cli(args: string[], options?: ProjectCommandOptions): Promise<ProcessResult>;
  /** Starts the installed `skillbox` (`dev`) without waiting for it. */
  startCli(args: string[], options?: ProjectCommandOptions): ReturnType<ProcessGroup["start"]>;
  /** Runs any command (npm, pnpm) in the project with a user's environment. */
  exec(file: string, args: string[], options?: ProjectCommandOptions): Promise<ProcessResult>;
}

/** Throws when `root` sits in a workspace, where Node or pnpm would find packages the project never installed. */
function requireOutsideAnyProject(root: string): void {
  for (let folder = dirname(realpathSync(root)); ; folder = dirname(folder)) {
    for (const entry of ["node_modules", "package.json", "pnpm-workspace.yaml"]) {
      if (existsSync(join(folder, entry))) {
        throw new Error(
          `${join(folder, entry)} is above the temporary project ${root}: packages there would resolve ` +
            "from it; point TMPDIR at a folder outside any project",
        );
      }
    }
    if (dirname(folder) === folder) return;
  }
}

/** The project's package.json: for pnpm, only `skillbox`, the other tarballs replacing registry versions. */
function projectManifest(layout: InstallLayout, tarballs: PackedPackages): object {
  const base = { name: "skillbox-user-project", version: "0.0.0", private: true, type: "module" };
  if (layout === "npm") return base;
  const { skillbox, ...libraries } = tarballs;
  return {
    ...base,
    dependencies: { skillbox: `file:${skillbox}` },
    pnpm: {
      // They are not on the registry yet: pnpm takes each from its tarball wherever it is depended on.
      overrides: Object.fromEntries(Object.entries(libraries).map(([name, file]) => [name, `file:${file}`])),
      // pnpm 10 runs no install scripts unless allowed; better-sqlite3 needs its native build.
      onlyBuiltDependencies: ["better-sqlite3"],
    },
  };
}

function installCommand(layout: InstallLayout, tarballs: PackedPackages): [string, string[]] {
  if (layout === "npm") {
    // Cached metadata and tarballs first: the workspace's install already fetched most of them.
    return ["npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...Object.values(tarballs)]];
  }
  // CI=true would make pnpm demand a lockfile this fresh project cannot have.
  return ["pnpm", ["install", "--prefer-offline", "--no-frozen-lockfile"]];
}

/** Installs the tarballs into `options.root` with npm or pnpm; fails with the installer's output. */
export async function installProject(options: InstallProjectOptions): Promise<InstalledProject> {
  const { layout, tarballs, root } = options;
  requireOutsideAnyProject(root);
  const processes = createProcessGroup();
  const path = (...relativePath: string[]) => join(root, ...relativePath);
  const write = (files: Record<string, string | object>) => {
    for (const [relativePath, content] of Object.entries(files)) {
      const file = path(relativePath);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
    }
  };
  const exec = (file: string, args: string[], commandOptions: ProjectCommandOptions = {}) =>
    processes.run(file, args, {
      cwd: path(commandOptions.cwd ?? "."),
      env: { ...userEnvironment(), ...commandOptions.environment },
      timeoutMs: commandOptions.timeoutMs,
    });
  write({ "package.json": projectManifest(layout, tarballs) });
  const [file, args] = installCommand(layout, tarballs);
  const environment = layout === "npm" ? localNativePrebuilds(options.prebuildsFolder) : {};
  const install = await exec(file, args, { timeoutMs: 300_000, environment });
  if (install.code !== 0) throw new Error(`installing the tarballs failed\n${describeResult(install)}`);
  const binary = path("node_modules", ".bin", "skillbox");
  if (!existsSync(binary)) {
    throw new Error(`${layout} installed no node_modules/.bin/skillbox (the "bin" field of skillbox)`);
  }
  return {
    layout,
    root,
    binary,
    installDurationMs: install.durationMs,
    processes,
    path,
    write,
    exec,
    cli: (cliArgs, commandOptions = {}) => exec(binary, cliArgs, { timeoutMs: 60_000, ...commandOptions }),
    startCli: (cliArgs, commandOptions = {}) =>
      processes.start(binary, cliArgs, {
        cwd: path(commandOptions.cwd ?? "."),
        env: { ...userEnvironment(), ...commandOptions.environment },
        timeoutMs: commandOptions.timeoutMs ?? 120_000,
      }),
  };
}
