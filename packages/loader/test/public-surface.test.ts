import { fileURLToPath } from "node:url";
import { describePublicSurface } from "@skillbox/test-helpers/public-surface";

/**
 * Every runtime export of `@skillbox/loader`, sorted. Adding one is a deliberate edit of this list:
 * what users import is documented in a README; what only Skillbox's own packages need goes to
 * `@skillbox/loader/internal` instead.
 */
const PUBLIC_EXPORTS = [
  "LOADER_ERROR_CODES",
  "SkillLoader",
  "SkillWatcher",
  "interceptorManifestSchema",
  "loadSkills",
  "skillManifestSchema",
  "watchSkills",
];

describePublicSurface({
  packageName: "@skillbox/loader",
  packageRoot: fileURLToPath(new URL("..", import.meta.url)),
  exports: PUBLIC_EXPORTS,
  importSource: () => import("@skillbox/loader"),
  importInternal: () => import("@skillbox/loader/internal"),
});
