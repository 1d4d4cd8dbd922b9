/**
 * Skill and interceptor folders as a user writes them in their own project, each as a map of
 * file path (relative to a skills folder) to content, for `InstalledProject.write`.
 */

type Files = Record<string, string | object>;

const NAME_INPUT = {
  type: "object",
  properties: { name: { type: "string", minLength: 1 } },
  required: ["name"],
  additionalProperties: false,
};

/**
 * A plain skill (no imports) and an interceptor plugin that rewrites its output: the
 * interceptor's factory gets the `options` of interceptor.json.
 */
export function interceptorFixture(folder: string): Files {
  return {
    [`${folder}/greet/skill.json`]: {
      name: "greet",
      version: "1.0.0",
      description: "Greets by name",
      input: NAME_INPUT,
      output: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
      handler: "./index.mjs",
    },
    [`${folder}/greet/index.mjs`]: `export default ({ name }) => ({ message: \`Hello, \${name}!\` });\n`,
    [`${folder}/shout/interceptor.json`]: {
      name: "shout",
      version: "1.0.0",
      description: "Upper-cases the greet skill's message and appends a suffix",
      handler: "./index.ts",
      options: { suffix: " (shouted)" },
    },
    [`${folder}/shout/index.ts`]: `import { defineInterceptor } from "@skillbox/core";

interface ShoutOptions {
  suffix: string;
}

export default function createShout(options: ShoutOptions) {
  return defineInterceptor({
    name: "shout",
    match: { names: ["greet"] },
    after: (_context, result) => {
      const { message } = result.output as { message: string };
      return { output: { message: message.toUpperCase() + options.suffix } };
    },
  });
}
`,
  };
}

/** A skill whose handler reports whether it runs on the main thread; `runtime: "worker"`. */
export function workerFixture(folder: string): Files {
  return {
    [`${folder}/thread-probe/skill.json`]: {
      name: "thread-probe",
      version: "1.0.0",
      description: "Says which thread it runs on",
      input: { type: "object" },
      output: {
        type: "object",
        properties: { isMainThread: { type: "boolean" }, threadId: { type: "number" } },
        required: ["isMainThread", "threadId"],
      },
      handler: "./index.ts",
      runtime: "worker",
      timeoutMs: 10_000,
    },
    [`${folder}/thread-probe/index.ts`]: `import { isMainThread, threadId } from "node:worker_threads";
import { defineSkill } from "@skillbox/core";

export default defineSkill({
  handler: () => ({ isMainThread, threadId }),
});
`,
  };
}

/** A TypeScript handler run in a container sandbox, reporting the user it runs as. */
export function containerFixture(folder: string): Files {
  return {
    [`${folder}/user-probe/skill.json`]: {
      name: "user-probe",
      version: "1.0.0",
      description: "Says which user it runs as, inside its sandbox",
      input: { type: "object" },
      output: {
        type: "object",
        properties: { uid: { type: "number" } },
        required: ["uid"],
      },
      handler: "./index.ts",
      runtime: "container",
      timeoutMs: 30_000,
      sandbox: { memoryMb: 128, network: false },
    },
    [`${folder}/user-probe/index.ts`]: `import { defineSkill } from "@skillbox/core";

export default defineSkill({
  handler: () => ({ uid: process.getuid?.() ?? -1 }),
});
`,
  };
}

/** An inline handler importing both entries of `@skillbox/core` a handler may use. */
export function coreImportFixture(folder: string): Files {
  return {
    [`${folder}/core-probe/skill.json`]: {
      name: "core-probe",
      version: "1.0.0",
      description: "Uses defineSkill and SkillboxError from @skillbox/core",
      input: NAME_INPUT,
      output: {
        type: "object",
        properties: { message: { type: "string" }, errorCode: { type: "string" } },
        required: ["message", "errorCode"],
      },
      handler: "./index.ts",
    },
    [`${folder}/core-probe/index.ts`]: `import { defineSkill } from "@skillbox/core";
import { SkillboxError } from "@skillbox/core/handler";

export default defineSkill({
  handler: (input) => ({
    message: \`core says hello to \${(input as { name: string }).name}\`,
    errorCode: new SkillboxError("USAGE", "probe").code,
  }),
});
`,
  };
}

/**
 * A skill package whose handler imports `zod`, with a package.json of its own that does not
 * declare it: it must fail to load with the fix until the folder installs zod itself.
 */
export function undeclaredZodFixture(folder: string): Files {
  return {
    [`${folder}/zod-greet/package.json`]: {
      name: "zod-greet",
      version: "1.0.0",
      private: true,
      type: "module",
    },
    [`${folder}/zod-greet/skill.json`]: {
      name: "zod-greet",
      version: "1.0.0",
      description: "Greets by name, checking the input with zod",
      input: NAME_INPUT,
      output: {
        type: "object",
        properties: { message: { type: "string" } },
        required: ["message"],
      },
      handler: "./index.ts",
    },
    [`${folder}/zod-greet/index.ts`]: `import { defineSkill } from "@skillbox/core";
import { z } from "zod";

const Name = z.object({ name: z.string().min(1) });

export default defineSkill({
  handler: (input) => ({ message: \`zod checked \${Name.parse(input).name}\` }),
});
`,
  };
}
