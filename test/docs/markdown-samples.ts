import { readFileSync } from "node:fs";

/** How a sample is checked (see the markers documented in readme-samples.test.ts). */
export type SampleMode = "run" | "container" | "typecheck" | "skip" | "host" | "parse";

/** The kind of a fenced block, from its info string. */
export type SampleKind = "code" | "shell" | "json" | "text";

/** One fenced block of a Markdown file, with the marker that precedes it. */
export interface MarkdownSample {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  kind: SampleKind;
  /** The fence's language (`ts`, `sh`, …), empty when none. */
  language: string;
  code: string;
  /** Set when a marker says so; undefined when the block has no marker. */
  mode: SampleMode | undefined;
  /** Whether the marker is `continue`: the sample is appended to the previous code sample. */
  continues: boolean;
  /** The reason a `skip` or `typecheck` marker gives. */
  reason: string | undefined;
  /** Hidden lines of the marker, put before the sample's code. */
  prelude: string;
  /** `NAME=value` words of a `host` marker: the environment of the host it starts. */
  hostEnvironment: Record<string, string>;
  /** What is wrong with the marker, if anything. */
  markerError: string | undefined;
}

const CODE_LANGUAGES = new Set(["ts", "typescript", "js", "javascript", "mjs"]);
const SHELL_LANGUAGES = new Set(["sh", "bash", "shell"]);

function kindOf(language: string): SampleKind {
  if (CODE_LANGUAGES.has(language)) return "code";
  if (SHELL_LANGUAGES.has(language)) return "shell";
  if (language === "json") return "json";
  return "text";
}

interface Marker {
  directive: string;
  prelude: string;
}

/** The `<!-- sample: … -->` comment that ends right before `lineIndex` (blank lines between are fine). */
function markerBefore(lines: string[], lineIndex: number): Marker | undefined {
  let end = lineIndex - 1;
  while (end >= 0 && lines[end]?.trim() === "") end--;
  if (end < 0 || !lines[end]?.trimEnd().endsWith("-->")) return undefined;
  let start = end;
  while (start >= 0 && !lines[start]?.includes("<!--")) start--;
  if (start < 0) return undefined;
  const comment = lines
    .slice(start, end + 1)
    .join("\n")
    .replace(/^\s*<!--/, "")
    .replace(/-->\s*$/, "");
  const match = /^\s*sample:([^\n]*)\n?([\s\S]*)$/.exec(comment);
  if (match === null) return undefined;
  return { directive: match[1]?.trim() ?? "", prelude: match[2] ?? "" };
}

/** Reads the marker's directive into the sample's mode, reason and host environment. */
function applyDirective(sample: MarkdownSample, directive: string): void {
  const match = /^(\w+)\s*(?:\((.*)\))?\s*(.*)$/.exec(directive);
  const word = match?.[1];
  sample.reason = match?.[2]?.trim() || undefined;
  const rest = match?.[3]?.trim() ?? "";
  const place = `${sample.file}:${sample.line}`;
  switch (word) {
    case "run":
    case "container":
    case "typecheck":
    case "skip":
    case "host":
      sample.mode = word;
      break;
    case "continue":
      sample.continues = true;
      break;
    default:
      sample.markerError = `${place}: unknown sample marker "${directive}" (use run, container, typecheck (why), skip (why), continue or host)`;
      return;
  }
  if ((word === "skip" || word === "typecheck") && sample.reason === undefined) {
    sample.markerError = `${place}: \`sample: ${word}\` needs a reason in parentheses, e.g. \`sample: ${word} (needs an API key)\``;
  }
  if (word === "host") {
    for (const assignment of rest.split(/\s+/).filter(Boolean)) {
      const equals = assignment.indexOf("=");
      if (equals <= 0)
        sample.markerError = `${place}: host marker words must be NAME=value, got "${assignment}"`;
      else sample.hostEnvironment[assignment.slice(0, equals)] = assignment.slice(equals + 1);
    }
  }
  if ((word === "host" || word === "run" || word === "container") && sample.kind === "json") {
    sample.markerError = `${place}: a JSON sample is parsed, it cannot be \`${word}\``;
  }
  if (word === "host" && sample.kind !== "shell") {
    sample.markerError = `${place}: \`sample: host\` is for sh samples`;
  }
}

/** Every fenced block of a Markdown file, in order, with its marker. */
export function extractSamples(absolutePath: string, file: string): MarkdownSample[] {
  const lines = readFileSync(absolutePath, "utf8").split("\n");
  const samples: MarkdownSample[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[index] ?? "");
    if (open === null) continue;
    const fence = open[2] ?? "```";
    const language = (open[3] ?? "").toLowerCase();
    let close = index + 1;
    while (close < lines.length && !lines[close]?.trim().startsWith(fence)) close++;
    const sample: MarkdownSample = {
      file,
      line: index + 1,
      kind: kindOf(language),
      language,
      code: `${lines.slice(index + 1, close).join("\n")}\n`,
      mode: undefined,
      continues: false,
      reason: undefined,
      prelude: "",
      hostEnvironment: {},
      markerError: undefined,
    };
    const marker = markerBefore(lines, index);
    if (marker !== undefined) {
      applyDirective(sample, marker.directive);
      sample.prelude = marker.prelude;
    }
    if (sample.mode === undefined && sample.kind === "json") sample.mode = "parse";
    samples.push(sample);
    index = close;
  }
  return samples;
}
