/**
 * What a tool name may look like: what OpenAI, Anthropic and Gemini all accept (the MCP spec
 * also allows `.` and 128 characters, but MCP clients forward tools to these model APIs). Tool
 * names made here also start with a letter or `_`, which Gemini requires.
 */
export const TOOL_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

const MAX_TOOL_NAME_LENGTH = 64;

/** A skill as a tool stands for it: the name, and the version when the tool is pinned to one. */
export interface ToolReference {
  name: string;
  version?: string;
}

/** Tool names of one set of skills offered together, both ways. */
export interface ToolNameMap {
  /** The tool name of `reference`, or `undefined` when it is not in the set. */
  toolName(reference: ToolReference): string | undefined;
  /**
   * The skill `toolName` stands for, or `undefined` for any other name (a tool of the client, a
   * name the model made up). Never guessed from the spelling: only names of the set read back.
   */
  reference(toolName: string): ToolReference | undefined;
  /** Every reference with its tool name, in the stable order the names were given in. */
  readonly entries: ReadonlyArray<{ reference: ToolReference; toolName: string }>;
}

/** `name` or `name@version`: one key per reference, and the stable order (by UTF-16 code units). */
function referenceKey(reference: ToolReference): string {
  return reference.version === undefined ? reference.name : `${reference.name}@${reference.version}`;
}

/** Every character outside the allowed set (a `.`, a `/`, `+`, a non-ASCII letter) becomes `_`. */
function sanitize(text: string): string {
  return text.replace(/[^a-zA-Z0-9_-]/gu, "_");
}

/**
 * The tool name of a reference when nothing else in the set competes for it:
 * `github.issues` → `github_issues`, `@acme/weather` → `acme__weather`,
 * `echo@1.2.0-rc.1` → `echo_v1_2_0-rc_1`; a name starting with a digit or `-` gets a leading
 * `_`; a name over 64 characters is cut (a pinned one keeps its version).
 */
function plainToolName(reference: ToolReference): string {
  const scoped = /^@([^/]+)\/(.+)$/.exec(reference.name);
  let name = sanitize(scoped === null ? reference.name : `${scoped[1]}__${scoped[2]}`);
  if (!/^[a-zA-Z_]/.test(name)) name = `_${name}`;
  const version = reference.version === undefined ? "" : `_v${sanitize(reference.version)}`;
  if (version.length >= MAX_TOOL_NAME_LENGTH) return (name + version).slice(0, MAX_TOOL_NAME_LENGTH);
  return name.slice(0, MAX_TOOL_NAME_LENGTH - version.length) + version;
}

function byKey(left: ToolReference, right: ToolReference): number {
  const a = referenceKey(left);
  const b = referenceKey(right);
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/**
 * The tool names of a set of skills offered together — the one naming scheme of MCP's
 * `tools/list` and of `@skillbox/llm`'s `toTools`, so a skill has the same tool name in both:
 *
 * - `echo` → `echo`; `get_weather-v2` → `get_weather-v2` (letters, digits, `_`, `-` stay)
 * - `github.issues` → `github_issues` (every other character becomes `_`)
 * - `@acme/weather` → `acme__weather` (a scope becomes a double underscore)
 * - `echo@1.2.0` → `echo_v1_2_0` (a tool pinned to one version)
 * - `3d.render` → `_3d_render` (names start with a letter or `_`, which Gemini wants)
 * - names are cut at 64 characters
 *
 * Only when two references of the set get the same name does one take a suffix: the one whose
 * name is already that tool name exactly (`a_b` among `a.b` and `a_b`) keeps it, otherwise the
 * first by UTF-16 order of `name@version`; the others, in that order, get `_2`, `_3`, … (the
 * first suffix no other tool of the set has, the name cut to fit). The result depends only on
 * the set — not on the order of `references`, the host or a restart — and a suffixed name can
 * change when the set does, so decode a call with the map of the set its tools were listed
 * from. Duplicate references count once.
 */
export function createToolNameMap(references: Iterable<ToolReference>): ToolNameMap {
  const unique = new Map<string, ToolReference>();
  for (const reference of references) {
    const key = referenceKey(reference);
    if (!unique.has(key)) {
      unique.set(
        key,
        reference.version === undefined
          ? { name: reference.name }
          : { name: reference.name, version: reference.version },
      );
    }
  }
  const sorted = [...unique.values()].sort(byKey);
  const groups = new Map<string, ToolReference[]>();
  for (const reference of sorted) {
    const plain = plainToolName(reference);
    const group = groups.get(plain);
    if (group === undefined) groups.set(plain, [reference]);
    else group.push(reference);
  }
  const toolNames = new Map<string, string>();
  const losers: Array<{ reference: ToolReference; plain: string }> = [];
  for (const [plain, group] of groups) {
    // The skill whose name needs no change keeps it: its tool name never moves as others come and go.
    const exact = group.find((reference) => referenceKey(reference) === plain);
    const winner = exact ?? (group[0] as ToolReference);
    toolNames.set(referenceKey(winner), plain);
    for (const reference of group) if (reference !== winner) losers.push({ reference, plain });
  }
  const taken = new Set(groups.keys());
  losers.sort((left, right) => byKey(left.reference, right.reference));
  for (const { reference, plain } of losers) {
    for (let ordinal = 2; ; ordinal += 1) {
      const suffix = `_${ordinal}`;
      const candidate = plain.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
      if (taken.has(candidate)) continue;
      taken.add(candidate);
      toolNames.set(referenceKey(reference), candidate);
      break;
    }
  }
  const entries = sorted.map((reference) => ({
    reference,
    toolName: toolNames.get(referenceKey(reference)) as string,
  }));
  const byToolName = new Map(entries.map((entry) => [entry.toolName, entry.reference]));
  return {
    entries,
    toolName: (reference) => toolNames.get(referenceKey(reference)),
    reference: (toolName) => {
      const reference = byToolName.get(toolName);
      return reference === undefined ? undefined : { ...reference };
    },
  };
}
