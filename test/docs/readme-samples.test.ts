/**
 * Every fenced sample of every README (and of docs/) is checked, so that a sample cannot rot
 * or be forgotten:
 *
 * - `ts`/`typescript`/`js`/`mjs` samples are written to a temporary project outside the workspace
 *   (its node_modules link the workspace packages, as an install would), typechecked with the
 *   workspace's tsc under a user's strict tsconfig, and run with jiti (`npx jiti file.ts`) on a
 *   database of their own. A sample passes when its top-level code finishes without throwing;
 *   whatever it leaves open (a server, a watcher) ends with its process.
 * - `sh`/`bash` samples must carry a marker: `host` or `run`, or `skip (reason)`.
 * - `json` samples are parsed.
 * - Blocks with no language or another one (`text`, folder trees, diagrams) are prose, not samples.
 *
 * A marker is an HTML comment right before the fence (blank lines between are fine):
 *
 * - `<!-- sample: skip (reason) -->` — neither run nor typechecked; the reason is required.
 * - `<!-- sample: typecheck (reason) -->` — typechecked, not run (it needs an API key, a container
 *   engine, …); the reason is required.
 * - `<!-- sample: container -->` — code that needs a container engine and the test image
 *   (`bash packages/sandbox/scripts/build-test-image.sh`): typechecked, and run where podman is
 *   installed or in CI (elsewhere it is skipped, as the sandbox tests are).
 * - `<!-- sample: continue -->` — the sample continues the previous code sample of the same file
 *   (a tour in several steps): they are typechecked and run as one program.
 * - `<!-- sample: run -->` — the default for code; for `sh`, runs the commands with bash in the
 *   README's folder, with the workspace's `skillbox` on PATH and a fresh database.
 * - `<!-- sample: host NAME=value … -->` — `sh` only: starts `skillbox serve` over the repository's
 *   plugins on a free port (with those environment variables), runs the commands against it, and
 *   stops it.
 *
 * Lines after the first line of a marker are hidden code, put before the sample (declarations a
 * fragment needs, say). `localhost:3000` and `port: 3000` are replaced by a free port, and `curl`
 * fails on an HTTP error status.
 */
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { hasPodman } from "@skillbox/test-helpers/engine-availability";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractSamples, type MarkdownSample } from "./markdown-samples.js";
import {
  createSampleProject,
  freePort,
  runShellSample,
  type SampleProject,
  startSampleHost,
  withPort,
} from "./sample-project.js";

const repositoryRoot = resolve(import.meta.dirname, "../..");

/** The Markdown files whose samples are checked, relative to the repository. */
function documentationFiles(): string[] {
  const files = ["README.md"];
  for (const parent of ["packages", "plugins", "examples"]) {
    if (existsSync(join(repositoryRoot, parent, "README.md"))) files.push(`${parent}/README.md`);
    for (const entry of readdirSync(join(repositoryRoot, parent), { withFileTypes: true })) {
      const readme = `${parent}/${entry.name}/README.md`;
      if (entry.isDirectory() && existsSync(join(repositoryRoot, readme))) files.push(readme);
    }
  }
  if (existsSync(join(repositoryRoot, "docs"))) {
    for (const name of readdirSync(join(repositoryRoot, "docs"))) {
      if (name.endsWith(".md")) files.push(`docs/${name}`);
    }
  }
  return files;
}

/** One or more code samples of a file checked as one program. */
interface SampleProgram {
  name: string;
  first: MarkdownSample;
  mode: "run" | "container" | "typecheck" | "skip";
  code: string;
  extension: ".ts" | ".mjs";
}

const samples = documentationFiles().flatMap((file) => extractSamples(join(repositoryRoot, file), file));
const place = (sample: MarkdownSample) => `${sample.file}:${sample.line}`;

function programsOf(all: MarkdownSample[]): SampleProgram[] {
  const programs: SampleProgram[] = [];
  const lastOfFile = new Map<string, SampleProgram>();
  for (const sample of all.filter((entry) => entry.kind === "code")) {
    const previous = lastOfFile.get(sample.file);
    if (sample.continues && previous !== undefined) {
      previous.code += `\n// ${place(sample)}\n${sample.prelude}${sample.code}`;
      continue;
    }
    const mode =
      sample.mode === "typecheck" || sample.mode === "skip" || sample.mode === "container"
        ? sample.mode
        : "run";
    const program: SampleProgram = {
      name: place(sample),
      first: sample,
      mode,
      code: `// ${place(sample)}\n${sample.prelude}${sample.code}`,
      extension:
        sample.language === "js" || sample.language === "javascript" || sample.language === "mjs"
          ? ".mjs"
          : ".ts",
    };
    programs.push(program);
    lastOfFile.set(sample.file, program);
  }
  return programs;
}

const programs = programsOf(samples);
const checkedPrograms = programs.filter((program) => program.mode !== "skip");
const runPrograms = programs.filter((program) => program.mode === "run" || program.mode === "container");
const shellSamples = samples.filter(
  (sample) => sample.kind === "shell" && (sample.mode === "run" || sample.mode === "host"),
);
const jsonSamples = samples.filter((sample) => sample.kind === "json" && sample.mode === "parse");

/** The first-party plugins the code samples of a README folder import (`./plugins/<name>/…`). */
function pluginsImportedBy(readmeFolder: string): string[] {
  const code = checkedPrograms
    .filter(
      (program) => (dirname(program.first.file) === "." ? "" : dirname(program.first.file)) === readmeFolder,
    )
    .map((program) => program.code)
    .join("\n");
  return [...code.matchAll(/\.\/plugins\/([\w-]+)\//g)].map((match) => match[1] ?? "");
}

/** At most two sample processes at a time: the machine is shared. */
function createLimiter(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    while (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
const limited = createLimiter(2);

let root: string;
let project: SampleProject;
const fileOf = new Map<SampleProgram, string>();

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "skillbox-readme-samples-")));
  project = createSampleProject(repositoryRoot, root);
  for (const program of checkedPrograms) {
    const readmeFolder = dirname(program.first.file) === "." ? "" : dirname(program.first.file);
    const folder = project.folderFor(readmeFolder, pluginsImportedBy(readmeFolder));
    const base = program.first.file.split("/").at(-1)?.replace(/\.md$/, "") ?? "sample";
    const file = join(folder, `${base}-line-${program.first.line}${program.extension}`);
    writeFileSync(file, withPort(program.code, await freePort()));
    fileOf.set(program, file);
  }
});

afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

describe("README samples", () => {
  it("finds the samples of every README", () => {
    expect(documentationFiles()).toEqual(expect.arrayContaining(["README.md", "plugins/README.md"]));
    expect(programs.length).toBeGreaterThan(10);
  });

  it("marks every sample that is not run by default, with a valid marker", () => {
    const problems = samples.flatMap((sample) => {
      if (sample.markerError !== undefined) return [sample.markerError];
      if (sample.kind === "shell" && sample.mode === undefined) {
        return [
          `${place(sample)}: a ${sample.language} sample must be marked: <!-- sample: run -->, <!-- sample: host -->, or <!-- sample: skip (why) -->`,
        ];
      }
      if (sample.kind === "code" && sample.mode === "host") {
        return [`${place(sample)}: \`sample: host\` is for sh samples`];
      }
      return [];
    });
    expect(problems).toEqual([]);
  });

  it.concurrent("typechecks every TypeScript and JavaScript sample as a user's project would", async () => {
    const result = await limited(() => project.typecheck([...fileOf.values()]));
    // tsc names the temporary files: map them back to the README and line they came from.
    expect(result.output.replaceAll(`${root}/`, "")).toBe("");
    expect(result.ok).toBe(true);
  }, 60_000);

  it.for(runPrograms.map((program): [string, SampleProgram] => [program.name, program]))(
    "runs %s",
    { concurrent: true, timeout: 60_000 },
    async ([, program], context) => {
      if (program.mode === "container" && !hasPodman() && !process.env.CI) {
        context.skip("needs podman and the test image: bash packages/sandbox/scripts/build-test-image.sh");
      }
      const file = fileOf.get(program);
      if (file === undefined) throw new Error(`no file written for ${program.name}`);
      const result = await limited(() => project.run(file));
      context.expect(result.ok, result.output).toBe(true);
    },
  );

  it.each(jsonSamples.map((sample) => [place(sample), sample] as const))("parses %s", (_name, sample) => {
    expect(() => JSON.parse(sample.code)).not.toThrow();
  });

  it.concurrent.each(shellSamples.map((sample) => [place(sample), sample] as const))(
    "runs the commands of %s",
    async (_name, sample) =>
      limited(async () => {
        const database = join(root, `${place(sample).replaceAll(/[/:]/g, "-")}.db`);
        const host =
          sample.mode === "host"
            ? await startSampleHost({ repositoryRoot, database, environment: sample.hostEnvironment })
            : undefined;
        try {
          const code = host === undefined ? sample.code : withPort(sample.code, host.port);
          const result = await runShellSample({
            code: `${sample.prelude}${code}`,
            folder: join(repositoryRoot, dirname(sample.file)),
            repositoryRoot,
            database,
          });
          expect(result.ok, result.output).toBe(true);
        } finally {
          await host?.stop();
        }
      }),
    60_000,
  );
});
