import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync, constants as zlibConstants } from "node:zlib";
import { describe, expect, it } from "vitest";
import { studioAssetsDirectory } from "../src/node/index.js";

/**
 * What the whole Studio may weigh over the wire, gzipped as the server sends it: HTML, scripts
 * and stylesheets. Sizes are deterministic (timings are the bench's business), so this fails a
 * change that drags in a heavy dependency, not a slow machine. Headroom over today's build
 * (≈ 60 KB with every page, Preact and uPlot included) is deliberate; raise it only for a reason
 * written here.
 */
const BUDGET_BYTES = 80 * 1024;

/** The built files the first load fetches: index.html and what `assets/` holds (JS, CSS). */
function builtFiles(): string[] {
  const assets = join(studioAssetsDirectory, "assets");
  return [
    join(studioAssetsDirectory, "index.html"),
    ...readdirSync(assets)
      .filter((file) => /\.(js|css|html)$/.test(file))
      .map((file) => join(assets, file)),
  ];
}

describe("the Studio bundle", () => {
  it(`stays under ${BUDGET_BYTES / 1024} KB gzipped (HTML + JS + CSS)`, () => {
    if (!existsSync(join(studioAssetsDirectory, "index.html"))) {
      throw new Error(
        "packages/studio/dist/app is missing: run `pnpm --filter @skillbox/studio run build` first",
      );
    }
    const sizes = builtFiles().map((file) => ({
      file,
      gzipped: gzipSync(readFileSync(file), { level: zlibConstants.Z_BEST_COMPRESSION }).byteLength,
    }));
    const total = sizes.reduce((sum, entry) => sum + entry.gzipped, 0);
    expect(sizes.some((entry) => entry.file.endsWith(".js"))).toBe(true);
    expect(total, JSON.stringify(sizes, null, 2)).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
