import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectSuccess } from "./cli-expectations.js";
import type { InstalledProject } from "./installed-project.js";
import { PUBLIC_PACKAGES } from "./pack-public-packages.js";

/** Every file path an `exports` map points at (patterns with `*` left out). */
function exportTargets(exports: unknown): string[] {
  if (typeof exports === "string") return exports.includes("*") ? [] : [exports];
  if (typeof exports !== "object" || exports === null) return [];
  return Object.values(exports).flatMap(exportTargets);
}

/** `name`'s folder as Node resolves it from the package in `folder`; undefined when it does not. */
function resolvedFrom(folder: string, name: string): string | undefined {
  try {
    return dirname(createRequire(join(folder, "package.json")).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/**
 * Where `name` is installed, as skillbox (which depends on the others) finds it, or else as
 * @skillbox/server does: pnpm's strict layout links @skillbox/studio only into the server.
 */
function installedFolder(project: InstalledProject, name: string): string | undefined {
  const skillbox = realpathSync(project.path("node_modules", "skillbox"));
  if (name === "skillbox") return skillbox;
  const server = resolvedFrom(skillbox, "@skillbox/server");
  return resolvedFrom(skillbox, name) ?? (server === undefined ? undefined : resolvedFrom(server, name));
}

/**
 * What the tarballs hold once installed: every `main`, `types` and `exports` target, and what
 * the project itself can import (all packages with npm; only `skillbox` with pnpm's strict layout,
 * which is what makes the handler tests prove the host provides `@skillbox/core`).
 */
export function describeInstalledPackageSteps(installed: () => InstalledProject): void {
  describe("the installed packages", () => {
    it("have every file their main, types and exports name", () => {
      const project = installed();
      const missing: string[] = [];
      const checked: string[] = [];
      for (const { name } of PUBLIC_PACKAGES) {
        const folder = installedFolder(project, name);
        // With pnpm only skillbox's dependencies are installed (@skillbox/llm is not one).
        if (folder === undefined) continue;
        checked.push(name);
        const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
          main?: string;
          types?: string;
          exports?: unknown;
        };
        const targets = [manifest.main, manifest.types, ...exportTargets(manifest.exports)];
        for (const target of targets) {
          if (target !== undefined && !existsSync(join(folder, target))) missing.push(`${name}: ${target}`);
        }
      }
      // Every package skillbox runs on was checked; with pnpm, @skillbox/llm (which nothing the
      // project installs depends on) is found only when pnpm hoisted it into its virtual store.
      const required = PUBLIC_PACKAGES.map(({ name }) => name).filter(
        (name) => project.layout === "npm" || name !== "@skillbox/llm",
      );
      expect(checked).toEqual(expect.arrayContaining(required));
      expect(missing, "files named in package.json but missing from the tarball").toEqual([]);
    });

    it("import as the project declares them", async () => {
      const project = installed();
      const reachable =
        project.layout === "npm"
          ? [...PUBLIC_PACKAGES.map(({ name }) => name), "@skillbox/core/handler"]
          : ["skillbox"];
      const unreachable = project.layout === "npm" ? [] : ["@skillbox/core", "@skillbox/loader", "zod"];
      const script = `
        for (const name of ${JSON.stringify(reachable)}) await import(name);
        for (const name of ${JSON.stringify(unreachable)}) {
          const found = await import(name).then(() => true, (error) => error.code !== "ERR_MODULE_NOT_FOUND");
          if (found) throw new Error(name + " resolves from the project, which does not declare it");
        }
        console.log("imported " + ${JSON.stringify(reachable)}.join(", "));`;
      const result = await project.exec(process.execPath, ["--input-type=module", "--eval", script]);
      expectSuccess(result);
      expect(result.stdout).toContain(`imported ${reachable.join(", ")}`);
    });
  });
}
