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
  firstSchemaDifference,
  type SchemaComparisonOptions,
  type SchemaDifference,
} from "./manifest/compare-json-schemas.js";
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
export {
  needsModuleForSchemas,
  resolveSkillSchemas,
  type SkillSchemas,
} from "./manifest/skill-schemas.js";
export { LOADER_MARK } from "./manifest/to-registration.js";
export { checkSyntax } from "./module/check-syntax.js";
export { importFresh } from "./module/import-fresh.js";
export { importInterceptorModule, importSkillModule } from "./module/import-package-module.js";
export { SkillLoader, type SkillLoaderOptions } from "./skill-loader.js";
export {
  type SkillWatcher,
  type SkillWatcherEvents,
  type WatchSkillsOptions,
  watchSkills,
} from "./watch-skills.js";
