import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createProcessGroup, describeResult } from "./child-processes.js";
import { userEnvironment } from "./user-environment.js";

/** The repository's root folder. */
export const REPOSITORY_ROOT = resolve(import.meta.dirname, "../..");

/** The workspace folders of the packages published to npm, and their names. */
export const PUBLIC_PACKAGES = [
  { folder: "packages/cli", name: "skillbox" },
  { folder: "packages/core", name: "@skillbox/core" },
  { folder: "packages/loader", name: "@skillbox/loader" },
  { folder: "packages/sandbox", name: "@skillbox/sandbox" },
  { folder: "packages/server", name: "@skillbox/server" },
  { folder: "packages/llm", name: "@skillbox/llm" },
  { folder: "packages/studio", name: "@skillbox/studio" },
  { folder: "packages/distributed", name: "@skillbox/distributed" },
] as const;

/** Built files a package needs besides its `main`: the Studio's page, which Vite (not tsc) makes. */
const BUILT_FILES: Partial<Record<string, string>> = { "packages/studio": "dist/app/index.html" };

/** A public package's name. */
export type PublicPackageName = (typeof PUBLIC_PACKAGES)[number]["name"];

/** Absolute tarball path of each public package. */
export type PackedPackages = Record<PublicPackageName, string>;

/** Throws, naming the package and the fix, when a package has not been built. */
function requireBuilt(folder: string, name: string): void {
  const manifest = JSON.parse(readFileSync(join(REPOSITORY_ROOT, folder, "package.json"), "utf8")) as {
    main?: string;
  };
  for (const file of [manifest.main ?? "dist/index.js", BUILT_FILES[folder]]) {
    if (file !== undefined && !existsSync(join(REPOSITORY_ROOT, folder, file))) {
      throw new Error(
        `${name}: ${folder}/${file} is missing, so its tarball would lack it; ` +
          "run `pnpm build` first (`pnpm test` does)",
      );
    }
  }
}

/**
 * Packs every public package with `pnpm pack` (which turns `workspace:` and `catalog:` ranges
 * into real ones, as `pnpm publish` does) into `destination`, after checking each is built.
 */
export async function packPublicPackages(destination: string): Promise<PackedPackages> {
  for (const { folder, name } of PUBLIC_PACKAGES) requireBuilt(folder, name);
  mkdirSync(destination, { recursive: true });
  const processes = createProcessGroup();
  const packed: Partial<PackedPackages> = {};
  try {
    for (const { folder, name } of PUBLIC_PACKAGES) {
      const before = new Set(readdirSync(destination));
      const result = await processes.run("pnpm", ["pack", "--pack-destination", destination], {
        cwd: join(REPOSITORY_ROOT, folder),
        env: userEnvironment(),
        timeoutMs: 60_000,
      });
      const created = readdirSync(destination).filter((file) => !before.has(file) && file.endsWith(".tgz"));
      if (result.code !== 0 || created.length !== 1) {
        throw new Error(`pnpm pack of ${name} did not write one tarball\n${describeResult(result)}`);
      }
      packed[name] = join(destination, created[0]!);
    }
  } finally {
    await processes.stopAll();
  }
  return packed as PackedPackages;
}
