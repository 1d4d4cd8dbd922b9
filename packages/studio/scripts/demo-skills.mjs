// A small demo project for the Studio's screenshots: skills with rich input schemas, one that
// needs approval, one that fails now and then, one that calls others (`ctx.call`), and two
// interceptors. Plain handlers with no imports, so the folder works anywhere on disk.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** How long a handler waits: durations that differ make the charts worth a look. */
const PAUSE = "const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));";

const SKILLS = {
  greet: {
    manifest: {
      name: "greet",
      version: "1.2.0",
      description: "Greets someone in the language asked for",
      tags: ["demo", "text"],
      input: {
        type: "object",
        properties: {
          name: { type: "string", description: "Who to greet", default: "World" },
          language: { type: "string", enum: ["en", "fr", "de"], default: "en" },
          excited: { type: "boolean", default: false },
        },
        required: ["name"],
        additionalProperties: false,
      },
      output: { type: "object", properties: { greeting: { type: "string" } }, required: ["greeting"] },
      examples: [
        {
          description: "In French",
          input: { name: "Ada", language: "fr" },
          output: { greeting: "Bonjour, Ada" },
        },
      ],
    },
    handler: `${PAUSE}
const WORDS: Record<string, string> = { en: "Hello", fr: "Bonjour", de: "Hallo" };
export default async function handler(input: { name: string; language?: string; excited?: boolean }) {
  await pause(3 + input.name.length);
  const greeting = \`\${WORDS[input.language ?? "en"]}, \${input.name}\`;
  return { greeting: input.excited ? \`\${greeting}!\` : greeting };
}
`,
  },
  "convert-temperature": {
    manifest: {
      name: "convert-temperature",
      version: "1.0.0",
      description: "Converts a temperature between Celsius, Fahrenheit and Kelvin",
      tags: ["demo", "units"],
      input: {
        type: "object",
        properties: {
          value: { type: "number", description: "The temperature to convert" },
          from: { type: "string", enum: ["celsius", "fahrenheit", "kelvin"], default: "celsius" },
          to: { type: "string", enum: ["celsius", "fahrenheit", "kelvin"], default: "fahrenheit" },
          precision: { type: "integer", minimum: 0, maximum: 6, default: 1 },
        },
        required: ["value"],
        additionalProperties: false,
      },
      output: { type: "object", properties: { value: { type: "number" }, unit: { type: "string" } } },
      examples: [
        {
          description: "Body temperature",
          input: { value: 37, from: "celsius", to: "fahrenheit" },
          output: { value: 98.6, unit: "fahrenheit" },
        },
      ],
    },
    handler: `export default function handler(input: { value: number; from?: string; to?: string; precision?: number }) {
  const from = input.from ?? "celsius";
  const to = input.to ?? "fahrenheit";
  const celsius = from === "celsius" ? input.value : from === "kelvin" ? input.value - 273.15 : ((input.value - 32) * 5) / 9;
  const value = to === "celsius" ? celsius : to === "kelvin" ? celsius + 273.15 : (celsius * 9) / 5 + 32;
  return { value: Number(value.toFixed(input.precision ?? 1)), unit: to };
}
`,
  },
  "word-count": {
    manifest: {
      name: "word-count",
      version: "1.0.0",
      description: "Counts the words and lines of a text",
      tags: ["demo", "text"],
      input: {
        type: "object",
        properties: { text: { type: "string" } },
        required: ["text"],
      },
      output: { type: "object", properties: { words: { type: "integer" }, lines: { type: "integer" } } },
    },
    handler: `export default function handler(input: { text: string }) {
  return { words: input.text.split(/\\s+/).filter(Boolean).length, lines: input.text.split("\\n").length };
}
`,
  },
  "fetch-forecast": {
    manifest: {
      name: "fetch-forecast",
      version: "0.3.0",
      description: "Reads tomorrow's forecast for a city (the demo's upstream fails for some)",
      tags: ["demo", "network"],
      input: {
        type: "object",
        properties: {
          city: { type: "string" },
          days: { type: "integer", minimum: 1, maximum: 7, default: 1 },
        },
        required: ["city"],
      },
    },
    handler: `${PAUSE}
export default async function handler(input: { city: string; days?: number }) {
  await pause(20 + input.city.length * 9);
  if (input.city.length % 3 === 0) throw new Error(\`the forecast service answered 503 for \${input.city}\`);
  return { city: input.city, days: input.days ?? 1, summary: "light rain, 14 °C" };
}
`,
  },
  "daily-digest": {
    manifest: {
      name: "daily-digest",
      version: "2.0.0",
      description: "Builds a digest from other skills (ctx.call), reporting progress",
      tags: ["demo", "composite"],
      input: {
        type: "object",
        properties: { reader: { type: "string" }, notes: { type: "string" } },
        required: ["reader"],
      },
    },
    handler: `${PAUSE}
export default async function handler(input: { reader: string; notes?: string }, ctx: any) {
  ctx.progress({ progress: 0, total: 2, message: "greeting" });
  const hello = await ctx.call("greet", { name: input.reader });
  ctx.progress({ progress: 1, total: 2, message: "counting" });
  const count = await ctx.call("word-count", { text: input.notes ?? "nothing today" });
  await pause(40);
  ctx.progress({ progress: 2, total: 2, message: "done" });
  return { title: hello.greeting, words: count.words };
}
`,
  },
  "publish-post": {
    manifest: {
      name: "publish-post",
      version: "1.0.0",
      description: "Publishes a post on the team blog once someone approves it",
      tags: ["demo", "approval"],
      approval: "required",
      input: {
        type: "object",
        properties: {
          title: { type: "string" },
          body: { type: "string" },
          tags: { type: "array", items: { type: "string" } },
        },
        required: ["title", "body"],
      },
    },
    handler: `export default function handler(input: { title: string }) {
  return { published: true, url: \`https://blog.example/\${encodeURIComponent(input.title)}\` };
}
`,
  },
};

const INTERCEPTORS = {
  "audit-trail": {
    manifest: {
      name: "audit-trail",
      version: "1.0.0",
      description: "Notes who ran what (the demo keeps nothing)",
      handler: "./index.ts",
      order: -50,
    },
    handler: `export default function createAuditTrail() {
  return { name: "audit-trail", before() {}, after() {} };
}
`,
  },
  "tag-policy": {
    manifest: {
      name: "tag-policy",
      version: "1.0.0",
      description: "Lets network skills run only with a reason (the demo allows all)",
      handler: "./index.ts",
      order: 10,
      match: { tags: ["network"] },
    },
    handler: `export default function createTagPolicy() {
  return { name: "tag-policy", before() {} };
}
`,
  },
};

/** The `index.ts` of demo skill `name` (the screenshots script rewrites one to show a reload). */
export function demoHandler(name) {
  return SKILLS[name].handler;
}

/** Writes the demo's skill and interceptor folders into `pluginsDirectory`. */
export function writeDemoSkills(pluginsDirectory) {
  for (const [folder, skill] of Object.entries(SKILLS)) {
    mkdirSync(join(pluginsDirectory, folder), { recursive: true });
    writeFileSync(
      join(pluginsDirectory, folder, "skill.json"),
      `${JSON.stringify({ ...skill.manifest, handler: "./index.ts" }, null, 2)}\n`,
    );
    writeFileSync(join(pluginsDirectory, folder, "index.ts"), skill.handler);
  }
  for (const [folder, interceptor] of Object.entries(INTERCEPTORS)) {
    mkdirSync(join(pluginsDirectory, folder), { recursive: true });
    writeFileSync(
      join(pluginsDirectory, folder, "interceptor.json"),
      `${JSON.stringify(interceptor.manifest, null, 2)}\n`,
    );
    writeFileSync(join(pluginsDirectory, folder, "index.ts"), interceptor.handler);
  }
}

/**
 * The executions the screenshots show, made over the HTTP API: `[skill, input]` pairs. Some fail
 * (the forecast for 3-, 6- and 9-letter cities, a bad input), two wait for approval.
 */
export const DEMO_EXECUTIONS = [
  ["greet", { name: "Ada" }],
  ["greet", { name: "Grace", language: "fr" }],
  ["greet", { name: "Linus", language: "de", excited: true }],
  ["greet", { name: "Margaret" }],
  ["convert-temperature", { value: 37 }],
  ["convert-temperature", { value: 300, from: "kelvin", to: "celsius", precision: 2 }],
  ["convert-temperature", { value: "warm" }],
  ["word-count", { text: "the quick brown fox\njumps over the lazy dog" }],
  ["fetch-forecast", { city: "Lisbon" }],
  ["fetch-forecast", { city: "Oslo" }],
  ["fetch-forecast", { city: "Rome" }],
  ["fetch-forecast", { city: "Reykjavik", days: 3 }],
  ["fetch-forecast", { city: "Amsterdam" }],
  ["fetch-forecast", { city: "Nairobi" }],
  ["fetch-forecast", { city: "Lima" }],
  ["daily-digest", { reader: "Ada", notes: "ship the studio, write the docs" }],
  ["daily-digest", { reader: "Grace" }],
  [
    "publish-post",
    { title: "Skillbox Studio is here", body: "A dashboard for skill authors.", tags: ["release"] },
  ],
  ["publish-post", { title: "Weekly notes", body: "What changed this week." }],
];
