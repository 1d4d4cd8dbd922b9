export { discoverNpmPackages, listPackageFolders } from "./discovery/discover-package-roots.js";
export { type LoadSkillsResult, loadSkills } from "./load-skills.js";
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
export {
  displayPath,
  type InterceptorPackage,
  type PackageDescriptor,
  readPackage,
  type SkillPackage,
} from "./manifest/read-package.js";
export { LOADER_MARK } from "./manifest/to-registration.js";
export { checkSyntax } from "./module/check-syntax.js";
export { importFresh } from "./module/import-fresh.js";
export { importInterceptorModule } from "./module/import-package-module.js";
export { SkillLoader, type SkillLoaderOptions } from "./skill-loader.js";
export {
  type SkillWatcher,
  type SkillWatcherEvents,
  type WatchSkillsOptions,
  watchSkills,
} from "./watch-skills.js";
