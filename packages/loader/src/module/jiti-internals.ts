import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { SkillboxError } from "@skillbox/core";
import type { createJiti as CreateJiti, JitiOptions } from "jiti";

/** What jiti's internal entry hands a caller that loads modules its own way. */
export interface JitiHooks {
  onError(error: unknown): never;
  nativeImport(id: string | URL): Promise<unknown>;
  createRequire: typeof createRequire;
}

/** jiti's internal factory (`dist/jiti.cjs`): `createJiti` with the hooks its public entry fixes. */
export type CreateJitiWithHooks = (
  id: string,
  options: JitiOptions,
  hooks: JitiHooks,
) => ReturnType<typeof CreateJiti>;

/** The parts of jiti that `importFresh` builds its instances from. */
export interface JitiInternals {
  createJitiWithHooks: CreateJitiWithHooks;
  /** jiti's Babel transform (`dist/babel.cjs`), loaded on the first file that needs it. */
  transform: NonNullable<JitiOptions["transform"]>;
}

const requireFromHere = createRequire(import.meta.url);

/** The jiti range this package declares (its internal files are not an API: no other fits). */
function requiredRange(): string {
  // `../../package.json` from `src/module/` and `dist/module/` alike.
  const manifest = requireFromHere("../../package.json") as { dependencies?: Record<string, string> };
  return manifest.dependencies?.jiti ?? "(see @skillbox/loader's package.json)";
}

function versionAt(jitiFolder: string): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(jitiFolder, "package.json"), "utf8")) as {
      version?: unknown;
    };
    return typeof manifest.version === "string" ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

function unavailable(jitiFolder: string, file: string, cause: unknown): SkillboxError {
  const installed = versionAt(jitiFolder);
  const found = installed === undefined ? "no readable jiti there" : `jiti ${installed} there`;
  return new SkillboxError(
    "HANDLER_INVALID",
    `@skillbox/loader cannot load jiti's internal ${file} from ${jitiFolder} (${found}); it needs jiti ${requiredRange()}, whose internal files it uses: install the jiti version @skillbox/loader depends on (do not override or hoist another one over it)`,
    { cause, data: { file: join(jitiFolder, file), installed, required: requiredRange() } },
  );
}

function load<T>(jitiFolder: string, file: string): T {
  try {
    return requireFromHere(join(jitiFolder, file)) as T;
  } catch (error) {
    throw unavailable(jitiFolder, file, error);
  }
}

let cached: JitiInternals | undefined;

/**
 * jiti's internal factory and transform, from the jiti installed for this package (or from
 * `jitiFolder`), loaded on first use rather than at import: a jiti whose layout differs (another
 * version hoisted over ours) fails the first import of a skill with an error naming the jiti
 * version needed, instead of the host crashing as it starts.
 */
export function jitiInternals(jitiFolder?: string): JitiInternals {
  if (jitiFolder === undefined && cached !== undefined) return cached;
  let folder: string;
  try {
    folder = jitiFolder ?? dirname(requireFromHere.resolve("jiti/package.json"));
  } catch (error) {
    throw new SkillboxError(
      "HANDLER_INVALID",
      `@skillbox/loader cannot find jiti; it needs jiti ${requiredRange()}: reinstall its dependencies`,
      { cause: error, data: { required: requiredRange() } },
    );
  }
  const createJitiWithHooks = load<CreateJitiWithHooks>(folder, join("dist", "jiti.cjs"));
  let babel: JitiInternals["transform"] | undefined;
  const internals: JitiInternals = {
    createJitiWithHooks,
    transform: (options) => {
      babel ??= load<JitiInternals["transform"]>(folder, join("dist", "babel.cjs"));
      return babel(options);
    },
  };
  if (jitiFolder === undefined) cached = internals;
  return internals;
}
