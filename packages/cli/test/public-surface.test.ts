import { fileURLToPath } from "node:url";
import { describePublicSurface } from "@skillbox/test-helpers/public-surface";

/**
 * Every runtime export of `skillbox`, sorted. Adding one is a deliberate edit of this list:
 * what users import is documented in a README; what only this package's own modules need stays unexported.
 */
const PUBLIC_EXPORTS = ["CLI_ERROR_CODES", "defineConfig", "main"];

describePublicSurface({
  packageName: "skillbox",
  packageRoot: fileURLToPath(new URL("..", import.meta.url)),
  exports: PUBLIC_EXPORTS,
  importSource: () => import("skillbox"),
});
