/** The runtimes `skillbox new` can scaffold for. */
export type ScaffoldRuntime = "inline" | "worker" | "container";

/** What the templates are filled with. */
export interface SkillTemplateOptions {
  name: string;
  runtime: ScaffoldRuntime;
}

const RUNTIME_FIELDS: Record<ScaffoldRuntime, Record<string, unknown>> = {
  inline: { timeoutMs: 5000 },
  // A worker thread can be terminated at the deadline and gets its own heap limit.
  worker: { timeoutMs: 10000, memoryMb: 128 },
  // The folder is mounted read-only in a sandbox with no network; no Dockerfile is needed.
  container: { timeoutMs: 10000, sandbox: { memoryMb: 128, cpus: 0.5, network: false } },
};

const RUNTIME_NOTES: Record<ScaffoldRuntime, string> = {
  inline: "It runs `inline`: in the host's own thread, the fastest way to run trusted code.",
  worker:
    "It runs in a `worker` thread: a timeout or cancellation really terminates it, and `memoryMb` caps its heap.",
  container:
    "It runs in a `container` sandbox (podman, docker or bubblewrap): no network, a read-only root, an " +
    "unprivileged user, and the `sandbox` limits of skill.json. The folder is mounted read-only beside a " +
    "small runner, so no Dockerfile is needed.",
};

/** `skill.json`: schemas, runtime settings and the examples `skillbox test` runs. */
export function skillManifestTemplate({ name, runtime }: SkillTemplateOptions): string {
  const manifest = {
    name,
    version: "0.1.0",
    description: `Greets someone by name (replace this with what ${name} does)`,
    input: {
      type: "object",
      properties: { name: { type: "string", minLength: 1 } },
      required: ["name"],
      additionalProperties: false,
    },
    output: {
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
    },
    handler: "./index.ts",
    runtime,
    ...RUNTIME_FIELDS[runtime],
    tags: [],
    examples: [
      { description: "greets by name", input: { name: "Ada" }, output: { message: "Hello, Ada!" } },
      { description: "any greeting that fits the output schema passes", input: { name: "Grace" } },
    ],
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** `index.ts`: a handler typed by `@skillbox/core`'s types, against the schemas of skill.json. */
export function handlerTemplate({ name }: SkillTemplateOptions): string {
  // Types only: the import is erased before the handler runs, so the skill runs as generated in
  // every runtime (inline, worker, container) whether or not anything is installed next to it.
  return `import type { SkillHandler } from "@skillbox/core";

/** The input, as \`input\` in skill.json describes it: the executor checks it before the handler runs. */
interface Input {
  name: string;
}

/** The output, as \`output\` in skill.json describes it: the executor checks it after the handler returns. */
interface Output {
  message: string;
}

/**
 * The ${name} skill. Its schemas live in skill.json only (the one source the loader registers,
 * \`skillbox validate\` checks and clients are shown); these types mirror them for the editor and
 * \`npm run typecheck\`.
 */
const handler: SkillHandler<Input, Output> = (input, _context) => {
  // _context.signal aborts at the timeout (pass it to fetch() and other long work);
  // _context.logger writes structured log lines; _context.call runs another skill.
  return { message: \`Hello, \${input.name}!\` };
};

export default handler;
`;
}

/** The npm package name for a skill name (npm names are lower case). */
function packageNameOf(name: string): string {
  return name.toLowerCase();
}

/** The versions `package.json` pins that are known only at run time. */
export interface PackageTemplateVersions {
  /** The version of `@skillbox/core` the CLI runs with. */
  core: string;
}

/**
 * \`package.json\`: the skill as an npm package. \`@skillbox/core\` is a peer dependency (the host
 * that loads the skill provides it); the devDependencies are only for \`npm run typecheck\`.
 */
export function packageJsonTemplate(
  { name }: SkillTemplateOptions,
  versions: PackageTemplateVersions,
): string {
  const manifest = {
    name: packageNameOf(name),
    version: "0.1.0",
    type: "module",
    description: `The ${name} skill`,
    scripts: { typecheck: "tsc --noEmit" },
    peerDependencies: { "@skillbox/core": `^${versions.core}` },
    devDependencies: {
      "@skillbox/core": `^${versions.core}`,
      "@types/node": "^20.19.0",
      typescript: "^5.9.0",
    },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** \`tsconfig.json\`: strict NodeNext typechecking, nothing emitted (the loader runs index.ts as is). */
export function tsconfigTemplate(): string {
  const config = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
    include: ["*.ts"],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The skill folder's \`.gitignore\`: what \`npm install\` for typechecking puts there. */
export function skillGitignoreTemplate(): string {
  return "node_modules/\n";
}

/** \`README.md\`: what the folder is and how to work on it. */
export function readmeTemplate({ name, runtime }: SkillTemplateOptions, commandSuffix = ""): string {
  const suffix = commandSuffix === "" ? "" : ` ${commandSuffix}`;
  return `# ${name}

A [Skillbox](https://github.com/skillbox) skill. ${RUNTIME_NOTES[runtime]}

| file | what |
| --- | --- |
| \`skill.json\` | the manifest: name, version, input and output JSON Schemas (the one place they are declared), runtime, and \`examples\` |
| \`index.ts\` | the handler, typed with \`import type\` from \`@skillbox/core\` (so it runs with nothing installed) |
| \`package.json\` | \`@skillbox/core\` as a peer dependency; \`npm install && npm run typecheck\` typechecks the handler |
| \`tsconfig.json\` | strict TypeScript settings for the typecheck (nothing is emitted) |

Run from the project folder (where \`skillbox new\` was run):

\`\`\`sh
skillbox validate${suffix}                                  # checks the manifest and the handler, runs nothing
skillbox test ${name}${suffix}                              # runs the examples of skill.json
skillbox run ${name}${suffix} --input '{"name":"Ada"}'      # one execution, recorded in the audit trail
skillbox dev${suffix}                                       # serves it over HTTP and MCP, reloading on every edit
\`\`\`

Each entry of \`examples\` is \`{ "input": …, "output": … }\`: with \`output\`, the result must equal it
exactly; without, it must match the output schema.
`;
}
