import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/** What {@link describePublicSurface} checks of one package. */
export interface PublicSurfaceOptions {
  /** The package's name, the specifier of its main entry (`@skillbox/core`). */
  packageName: string;
  /** The package's folder: a plain `node` started there resolves the package as installed (dist/). */
  packageRoot: string;
  /** Every runtime export of the main entry, sorted. */
  exports: readonly string[];
  /** Imports the main entry under vitest (the TypeScript sources): passed in, so it resolves from the package's own tests. */
  importSource: () => Promise<object>;
  /** Imports the package's `internal` entry, when it has one. */
  importInternal?: () => Promise<object>;
}

/**
 * Runs an ES module in a plain `node` started in `cwd`: a package resolves there as it does for an
 * installed one (the built files under dist/), not to the TypeScript sources the tests run on.
 * `specifier` is the script's `process.argv[1]`.
 */
export function runNodeModule(script: string, specifier: string, cwd: string): string {
  return execFileSync(process.execPath, ["--input-type=module", "--eval", script, specifier], {
    cwd,
    encoding: "utf8",
  });
}

/** The sorted runtime export names of the built entry `specifier`, resolved from `cwd`. */
export function builtExportNames(specifier: string, cwd: string): string[] {
  const script =
    "const entry = await import(process.argv[1]); console.log(JSON.stringify(Object.keys(entry).sort()));";
  return JSON.parse(runNodeModule(script, specifier, cwd)) as string[];
}

/**
 * Defines the tests that hold a package's public barrel to its list: the list is sorted (a new
 * export is one line in its place, a deliberate edit), the built entry and the source entry
 * export exactly those names, and the `internal` entry shares none of them.
 */
export function describePublicSurface(options: PublicSurfaceOptions): void {
  const { packageName, packageRoot, exports } = options;
  describe(`the public surface of ${packageName}`, () => {
    it("lists the exports in order, so that a new one is one line in its place", () => {
      expect(exports).toEqual([...exports].sort());
    });

    it("exports exactly the listed names from the built entry", () => {
      expect(builtExportNames(packageName, packageRoot)).toEqual(exports);
    });

    it("exports the same names from the source entry", async () => {
      expect(Object.keys(await options.importSource()).sort()).toEqual(exports);
    });

    const { importInternal } = options;
    if (importInternal !== undefined) {
      it("keeps the internal entry apart: nothing is exported from both", async () => {
        const internal = Object.keys(await importInternal());
        expect(internal.length).toBeGreaterThan(0);
        expect(internal.filter((name) => exports.includes(name))).toEqual([]);
      });
    }
  });
}
