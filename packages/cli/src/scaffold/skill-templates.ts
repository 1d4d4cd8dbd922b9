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

/** `index.ts`: a typed handler. */
export function handlerTemplate({ name }: SkillTemplateOptions): string {
  // No imports but @skillbox/core: in a container sandbox only the skill's folder is mounted
  // (and @skillbox/core resolves to its light handler entry there), so zod would not be found.
  return `import { defineSkill } from "@skillbox/core";

/** Mirrors \`input\` in skill.json. */
interface Input {
  name: string;
}

/** Mirrors \`output\` in skill.json. */
interface Output {
  message: string;
}

/**
 * The ${name} skill. skill.json is the manifest the loader registers; the executor checks the
 * input against its \`input\` schema before this handler runs (so the cast below is safe) and
 * the result against its \`output\` schema after.
 */
export default defineSkill({
  // context.signal aborts at the timeout (pass it to fetch() and other long work);
  // context.logger writes structured log lines.
  handler: (input, _context): Output => {
    const { name } = input as Input;
    return { message: \`Hello, \${name}!\` };
  },
});
`;
}

/** `README.md`: what the folder is and how to work on it. */
export function readmeTemplate({ name, runtime }: SkillTemplateOptions): string {
  return `# ${name}

A [Skillbox](https://github.com/skillbox) skill. ${RUNTIME_NOTES[runtime]}

| file | what |
| --- | --- |
| \`skill.json\` | the manifest: name, version, input and output JSON Schemas, runtime, and \`examples\` |
| \`index.ts\` | the handler (\`defineSkill\`) |

The handler imports \`@skillbox/core\`: install it in the project (\`npm install @skillbox/core\`).

\`\`\`sh
skillbox validate                                  # checks the manifest and the handler, runs nothing
skillbox test ${name}                              # runs the examples of skill.json
skillbox run ${name} --input '{"name":"Ada"}'      # one execution, recorded in the audit trail
skillbox dev                                       # serves it over HTTP and MCP, reloading on every edit
\`\`\`

Each entry of \`examples\` is \`{ "input": …, "output": … }\`: with \`output\`, the result must equal it
exactly; without, it must match the output schema.
`;
}
