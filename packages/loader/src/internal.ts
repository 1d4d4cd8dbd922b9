/**
 * `@skillbox/loader/internal`: the loader's steps that the CLI (`skillbox validate`, `new`,
 * `test`) and the benchmarks run on their own, and that are not part of the public API.
 *
 * Not semver-stable: any release may change or remove what is here. Applications import
 * `@skillbox/loader`.
 */
export { listPackageFolders } from "./discovery/discover-package-roots.js";
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
export { checkSyntax } from "./module/check-syntax.js";
export { type ImportFreshOptions, importFresh } from "./module/import-fresh.js";
export { importInterceptorModule, importSkillModule } from "./module/import-package-module.js";
