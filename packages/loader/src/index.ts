export { discoverNpmPackages, listPackageFolders } from "./discovery/discover-package-roots.js";
export { type LoadSkillsResult, loadSkills } from "./load-skills.js";
export {
  type InterceptorManifest,
  interceptorManifestSchema,
  type SkillManifest,
  skillManifestSchema,
} from "./manifest/manifest-schemas.js";
export {
  type InterceptorPackage,
  type PackageDescriptor,
  readPackage,
  type SkillPackage,
} from "./manifest/read-package.js";
export { importFresh } from "./module/import-fresh.js";
export {
  type FailedPackage,
  LOADER_MARK,
  type LoadedPackage,
  type LoadReport,
  SkillLoader,
  type SkillLoaderEvents,
  type SkillLoaderOptions,
} from "./skill-loader.js";
export {
  type SkillWatcher,
  type SkillWatcherEvents,
  type WatchSkillsOptions,
  watchSkills,
} from "./watch-skills.js";
