import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { REPOSITORY_ROOT } from "./pack-public-packages.js";

/** The native packages the installed CLI depends on: they build with node-gyp when no prebuild is found. */
const NATIVE_PACKAGES = [{ name: "better-sqlite3", binary: "build/Release/better_sqlite3.node" }];

/** The folder of `name` as `resolve` finds it, or undefined when it is not installed there. */
function installedFolder(resolve: NodeJS.Require, name: string): string | undefined {
  try {
    return dirname(resolve.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/**
 * npm has no cache of built packages (pnpm's side-effects cache has one), so every fresh npm
 * install compiles better-sqlite3 from source: one to three minutes on 2 cores, most of this
 * test's time. Users normally get a prebuilt binary from GitHub instead, which this machine
 * cannot reach. So the workspace's own build of each native package is packed the way
 * `prebuild-install` names prebuilds, into `folder`, and the returned environment points
 * `prebuild-install` at it (`npm_config_<package>_local_prebuilds`). When npm resolves another
 * version than the workspace has, the name does not match and it compiles, as without this.
 */
export function localNativePrebuilds(folder: string): Record<string, string> {
  mkdirSync(folder, { recursive: true });
  const resolveFromCore = createRequire(join(REPOSITORY_ROOT, "packages/core/package.json"));
  const environment: Record<string, string> = {};
  for (const { name, binary } of NATIVE_PACKAGES) {
    const packageFolder = installedFolder(resolveFromCore, name);
    // No build of its own to offer: npm compiles it, as without this.
    if (packageFolder === undefined || !existsSync(join(packageFolder, binary))) continue;
    const { version } = JSON.parse(readFileSync(join(packageFolder, "package.json"), "utf8")) as {
      version: string;
    };
    // prebuild-install's `{name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz` (glibc: no libc part).
    const tarball = join(
      folder,
      `${name}-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`,
    );
    const packed = spawnSync("tar", ["-czf", tarball, "-C", packageFolder, binary], { encoding: "utf8" });
    if (packed.status !== 0) throw new Error(`packing the ${name} build failed: ${packed.stderr}`);
    environment[`npm_config_${name.replace(/[^a-zA-Z0-9]/g, "_")}_local_prebuilds`] = folder;
  }
  return environment;
}
