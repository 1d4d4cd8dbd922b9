#!/usr/bin/env node
// Checks the public packages as they will be published, from the tarballs `pnpm pack` makes
// (the same files and the same package.json a user installs, `workspace:` and `catalog:`
// replaced); checks that every range a workspace package spells for a catalog package is the
// catalog's, and that the packages people copy out of the repository (plugins, the
// skill-package examples) carry only ranges npm understands. Run by `pnpm check:packages`
// before knip; expects `pnpm build` to have run (the tarballs hold dist/).
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { publint } from "publint";
import { formatMessage } from "publint/utils";

const run = promisify(execFile);
const root = new URL("..", import.meta.url).pathname;

/** Folders of the packages published to npm. */
const PUBLIC_PACKAGES = ["core", "loader", "sandbox", "server", "llm", "cli", "studio", "distributed"].map(
  (name) => `packages/${name}`,
);
/** Files loaded by path at run time (not through `exports` or `bin`, so publint cannot see them). */
const REQUIRED_FILES = {
  "packages/core": [
    "worker/skill-worker.mjs",
    "worker/handler-module.mjs",
    "worker/handler-module.d.mts",
    "worker/hoisted-import-guard.mjs",
  ],
  "packages/sandbox": ["runner/container-runner.mjs", "scripts/build-test-image.sh"],
  "packages/cli": ["bin/skillbox.mjs"],
  // The Studio build @skillbox/server serves from `studioAssetsDirectory`, and the module naming it.
  "packages/studio": ["dist/app/index.html", "dist/node/index.js"],
};
/**
 * Folders of a package's tarball that a bundler (not tsc) writes: their files have no source of
 * the same name, and their index.html must name only files the tarball holds.
 */
const BUNDLED_OUTPUT = { "packages/studio": "dist/app/" };
/** What a tarball never needs: tests, fixtures and the compiler's incremental state. */
const NEEDLESS_FILE = /(^|\/)(test|tests|__tests__|fixtures)\/|\.test\.[cm]?[jt]s$|\.tsbuildinfo$/;
const DEPENDENCY_FIELDS = ["dependencies", "peerDependencies", "optionalDependencies"];
/** Protocols only pnpm inside this workspace understands. */
const WORKSPACE_ONLY_RANGE = /^(workspace|catalog):/;

const problems = [];
const readJson = (path) => JSON.parse(readFileSync(join(root, path), "utf8"));

/** The default catalog of pnpm-workspace.yaml: `  name: range` lines under `catalog:`. */
function readCatalog() {
  const lines = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8").split("\n");
  const start = lines.indexOf("catalog:");
  if (start === -1) throw new Error("pnpm-workspace.yaml: no `catalog:` block (this script reads it)");
  const catalog = new Map();
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const entry = /^ {2}"?([^":]+)"?: (\S+)$/.exec(line);
    if (entry === null) break;
    catalog.set(entry[1], entry[2]);
  }
  return catalog;
}

async function pack(folder, destination) {
  const { stdout } = await run("pnpm", ["pack", "--pack-destination", destination, "--json"], {
    cwd: join(root, folder),
  });
  return JSON.parse(stdout).filename;
}

async function checkTarball(folder, tarball) {
  const { stdout: listing } = await run("tar", ["-tzf", tarball]);
  const files = listing
    .split("\n")
    .filter(Boolean)
    .map((path) => path.replace(/^package\//, ""));
  for (const file of files.filter((path) => NEEDLESS_FILE.test(path))) {
    problems.push(`${folder}: the tarball holds ${file}; narrow "files" in package.json`);
  }
  // dist/ is never cleaned by `tsc -b`: an output whose source was moved or deleted would ship.
  const bundled = BUNDLED_OUTPUT[folder];
  const compiled = (path) =>
    /^dist\/.*\.js$/.test(path) && (bundled === undefined || !path.startsWith(bundled));
  for (const file of files.filter(compiled)) {
    const source = file.replace(/^dist\//, "src/").replace(/\.js$/, ".ts");
    if (!files.includes(source)) {
      problems.push(
        `${folder}: ${file} has no ${source}; a stale build output: rm -rf ${folder}/dist && pnpm build`,
      );
    }
  }
  for (const file of REQUIRED_FILES[folder] ?? []) {
    if (!files.includes(file)) problems.push(`${folder}: the tarball lacks ${file}; add it to "files"`);
  }
  if (bundled !== undefined && files.includes(`${bundled}index.html`)) {
    const { stdout: html } = await run("tar", ["-xOzf", tarball, `package/${bundled}index.html`]);
    // A page naming a file the tarball lacks would load blank in every installed project.
    for (const [, named] of html.matchAll(/(?:src|href)="\.\/([^"]+)"/g)) {
      if (!files.includes(`${bundled}${named}`)) {
        problems.push(`${folder}: ${bundled}index.html names ${named}, which the tarball lacks; rebuild it`);
      }
    }
  }
  // pnpm packs the package's README and the LICENSE (the workspace root's when the package has none).
  for (const file of ["LICENSE", "README.md"]) {
    if (!files.includes(file))
      problems.push(`${folder}: the tarball lacks ${file}; add ${folder}/${file} (or a LICENSE at the root)`);
  }
  const { stdout: manifestText } = await run("tar", ["-xOzf", tarball, "package/package.json"]);
  const manifest = JSON.parse(manifestText);
  for (const field of [...DEPENDENCY_FIELDS, "devDependencies"]) {
    for (const [name, range] of Object.entries(manifest[field] ?? {})) {
      if (WORKSPACE_ONLY_RANGE.test(range)) {
        problems.push(`${folder}: the packed ${field}.${name} is still "${range}"; pack with pnpm 10`);
      }
    }
  }
  // Without `default`, require() and loaders that resolve like it (jiti, in a strict pnpm layout)
  // fail with `No "exports" main defined`, although Node >= 20.19 can require() these ESM files.
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    if (typeof target === "object" && target !== null && !("default" in target)) {
      problems.push(
        `${folder}: exports["${subpath}"] has no "default" condition; name the ESM file under it`,
      );
    }
    // Every condition, the workspace's `@skillbox/source` too (publint knows only the standard
    // ones): a subpath added to `exports` (`./internal`, say) is packed whole or reported.
    for (const [condition, file] of exportTargets(target)) {
      if (!files.includes(file.replace(/^\.\//, ""))) {
        problems.push(
          `${folder}: exports["${subpath}"] ${condition} names ${file}, which the tarball lacks; build, or widen "files"`,
        );
      }
    }
  }
  const buffer = readFileSync(tarball);
  const lint = await publint({
    pack: { tarball: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) },
    strict: true,
  });
  for (const message of lint.messages) {
    problems.push(
      `${folder}: publint ${message.type}: ${formatMessage(message, lint.pkg, { color: false })}`,
    );
  }
  // The packages are ESM only ("type": "module", Node >= 20.19, which can also require() them):
  // the esm-only profile skips the node10 and CommonJS resolutions, which would only say so.
  try {
    await run("pnpm", ["exec", "attw", tarball, "--profile", "esm-only", "--format", "ascii"], { cwd: root });
  } catch (error) {
    problems.push(`${folder}: attw (are the types wrong) failed:\n${error.stdout}${error.stderr}`);
  }
}

/** The files an `exports` entry names, with the conditions that lead to each (`types`, `default`, …). */
function exportTargets(target, conditions = []) {
  if (typeof target === "string") return [[conditions.join(".") || "(plain)", target]];
  if (typeof target !== "object" || target === null) return [];
  return Object.entries(target).flatMap(([condition, inner]) =>
    exportTargets(inner, [...conditions, condition]),
  );
}

/** Packages copied out of the repository as they are (plugins/*, these examples): npm must accept them. */
const COPYABLE = [/^plugins\//, /^examples\/(interceptor-plugin|npm-skill-package)$/];

/** Where users' code lives in the repository: what they copy, and the examples they start from. */
const USER_CODE = ["plugins", "examples"];
/** An import of a package's `internal` subpath, which no release promises to keep. */
const INTERNAL_IMPORT = /["'](@skillbox\/[a-z-]+|skillbox)\/internal["']/;
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs|md)$/;

/**
 * Skills, interceptors and examples import only the public entries: `@skillbox/<name>/internal`
 * is for Skillbox's own packages (its JSDoc says so) and may change in any release.
 */
function checkUserCodeImports() {
  const visit = (folder) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist") continue;
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        visit(path);
        continue;
      }
      const internal =
        SOURCE_FILE.test(entry.name) && INTERNAL_IMPORT.exec(readFileSync(join(root, path), "utf8"));
      if (internal)
        problems.push(`${path}: imports ${internal[0]}, an internal subpath; use the package's public entry`);
    }
  };
  for (const folder of USER_CODE) visit(folder);
}

/** The folders of pnpm-workspace.yaml's `packages:` list (`dir` or `dir/*`), and the root. */
function workspaceFolders() {
  const lines = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8").split("\n");
  const folders = ["."];
  for (const line of lines.slice(lines.indexOf("packages:") + 1)) {
    const entry = /^ {2}- (\S+)$/.exec(line);
    if (entry === null) break;
    const pattern = entry[1];
    if (!pattern.endsWith("/*")) {
      folders.push(pattern);
      continue;
    }
    const parent = pattern.slice(0, -2);
    for (const child of readdirSync(join(root, parent), { withFileTypes: true })) {
      if (child.isDirectory() && existsSync(join(root, parent, child.name, "package.json"))) {
        folders.push(`${parent}/${child.name}`);
      }
    }
  }
  return folders;
}

/**
 * Every workspace package that spells a range for a catalog package spells the catalog's (the
 * loader spells jiti's because it reads it back at run time); the copyable ones spell only ranges
 * npm understands and take `@skillbox/core` from the host, as a peer.
 */
function checkDeclaredRanges(catalog) {
  for (const folder of workspaceFolders()) {
    const manifest = readJson(`${folder}/package.json`);
    const copyable = COPYABLE.some((pattern) => pattern.test(folder));
    for (const field of [...DEPENDENCY_FIELDS, "devDependencies"]) {
      for (const [name, range] of Object.entries(manifest[field] ?? {})) {
        if (copyable && WORKSPACE_ONLY_RANGE.test(range)) {
          problems.push(
            `${folder}/package.json: ${field}.${name} is "${range}", which npm refuses; spell a range`,
          );
        } else if (catalog.has(name) && range !== "catalog:" && catalog.get(name) !== range) {
          problems.push(
            `${folder}/package.json: ${field}.${name} is "${range}" but the catalog in pnpm-workspace.yaml says "${catalog.get(name)}"; use "catalog:" or the catalog's range`,
          );
        }
      }
    }
    if (copyable && manifest.dependencies?.["@skillbox/core"] !== undefined) {
      problems.push(
        `${folder}/package.json: @skillbox/core is a dependency; the host provides it, declare it under peerDependencies`,
      );
    }
  }
}

const destination = mkdtempSync(join(tmpdir(), "skillbox-check-packages-"));
try {
  checkDeclaredRanges(readCatalog());
  checkUserCodeImports();
  await Promise.all(
    PUBLIC_PACKAGES.map(async (folder) => checkTarball(folder, await pack(folder, destination))),
  );
} finally {
  rmSync(destination, { recursive: true, force: true });
}
if (problems.length > 0) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`check-packages: ${PUBLIC_PACKAGES.length} tarballs and the copyable packages are fine`);
