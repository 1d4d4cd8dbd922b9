import { defineConfig } from "vite";

/**
 * The Studio is built once, at `pnpm build`, into static files `@skillbox/server` serves: no dev
 * server, no CDN. Relative asset URLs (`base: "./"`) keep it working under any mount path.
 */
export default defineConfig({
  root: "src/app",
  base: "./",
  // Preact's automatic JSX runtime, compiled by Vite's esbuild: no Babel plugin needed.
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "../../dist/app",
    emptyOutDir: true,
    target: "es2022",
    // The bundle is small and its sources are in the repository; maps would double the tarball.
    sourcemap: false,
    reportCompressedSize: true,
  },
});
