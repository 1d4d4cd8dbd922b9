import { fileURLToPath } from "node:url";

/**
 * The folder of the built Studio (`index.html` and its hashed `assets/`), made by this package's
 * `vite build` and shipped in its tarball. `@skillbox/server` serves it under `/`.
 *
 * Resolved from this module's own location — `src/node/` in the repository, `dist/node/` when
 * installed: both sit two levels below the package root.
 */
export const studioAssetsDirectory: string = fileURLToPath(new URL("../../dist/app/", import.meta.url));
