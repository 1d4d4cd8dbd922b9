/**
 * `@skillbox/loader`: the public API (named exports only; packages/loader/test/public-surface.test.ts
 * lists them). The steps the CLI runs on their own are in `@skillbox/loader/internal`, which is not
 * semver-stable.
 */
export { type LoadSkillsResult, loadSkills } from "./load-skills.js";
export { LOADER_ERROR_CODES, type LoaderErrorCode } from "./loader-error-codes.js";
export type {
  FailedPackage,
  LoadedPackage,
  LoadReport,
  LoadWarning,
  SkillLoaderEvents,
} from "./loader-types.js";
export {
  type InterceptorManifest,
  interceptorManifestSchema,
  type SkillManifest,
  skillManifestSchema,
} from "./manifest/manifest-schemas.js";
export type { PackagePaths } from "./package-paths.js";
export { SkillLoader, type SkillLoaderOptions } from "./skill-loader.js";
export {
  SkillWatcher,
  type SkillWatcherEvents,
  type WatchSkillsOptions,
  watchSkills,
} from "./watch-skills.js";
