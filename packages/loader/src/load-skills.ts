import type { LoadReport } from "./loader-types.js";
import { SkillLoader, type SkillLoaderOptions } from "./skill-loader.js";

/** What `loadSkills` returns: the report and the loader, which keeps serving the handlers. */
export interface LoadSkillsResult extends LoadReport {
  loader: SkillLoader;
}

/**
 * One-shot discovery: loads every package of `dirs` (default `./plugins`) and of installed npm
 * packages into the registry and executor (by default the `@skillbox/core` defaults), and
 * reports what loaded and what failed, with reasons. Broken packages never throw.
 */
export async function loadSkills(options: SkillLoaderOptions = {}): Promise<LoadSkillsResult> {
  const loader = new SkillLoader(options);
  const report = await loader.loadAll();
  return { ...report, loader };
}
