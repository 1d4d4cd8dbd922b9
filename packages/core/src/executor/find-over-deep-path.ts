/** The default deepest nesting of objects and arrays in an input or output (`maxNestingDepth`). */
export const DEFAULT_MAX_NESTING_DEPTH = 100;

interface Visit {
  value: object;
  level: number;
  parent: Visit | undefined;
  key: string | number;
}

/** Path segments shown in full; a longer path keeps its start and end. */
const SHOWN_SEGMENTS = 12;

function formatSegment(key: string | number): string {
  if (typeof key === "number") return `[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function formatPath(root: string, visit: Visit): string {
  const keys: (string | number)[] = [];
  for (let current: Visit | undefined = visit; current?.parent !== undefined; current = current.parent) {
    keys.push(current.key);
  }
  keys.reverse();
  const text = (part: (string | number)[]) => part.map(formatSegment).join("");
  const hidden = keys.length - SHOWN_SEGMENTS / 2 - 3;
  const path =
    keys.length <= SHOWN_SEGMENTS
      ? root + text(keys)
      : `${root}${text(keys.slice(0, SHOWN_SEGMENTS / 2))}…(${hidden} more)…${text(keys.slice(-3)).replace(/^\./, "")}`;
  // Without a root the path starts at a key: `params.message`, not `.params.message`.
  return root === "" ? path.replace(/^\./, "") : path;
}

/** How many objects and arrays the allocation-free walk visits before it leaves a value to the full walk. */
const QUICK_WALK_OBJECTS = 32;

/**
 * Walks `value` (whose own level still has `levelsLeft` levels of room) by recursion bounded by
 * `budget` objects; returns the budget left, or -1 when the value may nest too deep — or the
 * budget ran out. Recursion is safe here: it never goes deeper than `budget` calls.
 */
function quickWalk(value: object, levelsLeft: number, budget: number): number {
  if (levelsLeft <= 0 || budget <= 0) return -1;
  let left = budget - 1;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const child: unknown = value[index];
      if (typeof child === "object" && child !== null) {
        left = quickWalk(child, levelsLeft - 1, left);
        if (left < 0) return -1;
      }
    }
  } else {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const child = (value as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) {
        left = quickWalk(child, levelsLeft - 1, left);
        if (left < 0) return -1;
      }
    }
  }
  return left;
}

/**
 * Where `value` first nests objects and arrays deeper than `maxDepth` levels (the value itself is
 * level 1 when it is an object or array), as a path for a message such as
 * `input.items[0].a…(90 more)…a.a.a` (`root` names the value, "" for none); undefined when it
 * does not.
 *
 * Walks with an explicit stack, never recursion: the point is to refuse values that recursive
 * code (`JSON.stringify`, schema validators, interceptors' copies) overflows the call stack on —
 * V8 parses 10,000 levels of JSON and then fails to stringify them. An object met again (shared,
 * or a cycle) is walked again only when reached at a shallower level, so shared subtrees cost at
 * most their size times the limit and a cycle ends the walk — it is no JSON, so it comes only
 * from in-process callers, and the audit row stores a note for it as for any unserialisable value.
 */
export function findOverDeepPath(value: unknown, maxDepth: number, root = "input"): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  // Most values are small trees: a walk that allocates nothing clears them, and anything it
  // cannot clear (too deep, too many objects, shared or cyclic parts) gets the full walk.
  if (quickWalk(value, maxDepth, QUICK_WALK_OBJECTS) >= 0) return undefined;
  const shallowestLevel = new Map<object, number>();
  const pending: Visit[] = [{ value, level: 1, parent: undefined, key: "" }];
  while (pending.length > 0) {
    const visit = pending.pop()!;
    if (visit.level > maxDepth) return formatPath(root, visit);
    const seenAt = shallowestLevel.get(visit.value);
    if (seenAt !== undefined && seenAt <= visit.level) continue;
    shallowestLevel.set(visit.value, visit.level);
    if (Array.isArray(visit.value)) {
      visit.value.forEach((child: unknown, index) => {
        if (typeof child === "object" && child !== null) {
          pending.push({ value: child, level: visit.level + 1, parent: visit, key: index });
        }
      });
    } else {
      for (const key in visit.value) {
        if (!Object.hasOwn(visit.value, key)) continue;
        const child = (visit.value as Record<string, unknown>)[key];
        if (typeof child === "object" && child !== null) {
          pending.push({ value: child, level: visit.level + 1, parent: visit, key });
        }
      }
    }
  }
  return undefined;
}
