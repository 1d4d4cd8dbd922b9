import { createJiti } from "jiti";

/**
 * Imports a module (TypeScript or JavaScript, ESM or CJS) with jiti, evaluating it and every
 * module it imports from source again — so after an edit the new code runs, including edited
 * helpers. Native `import()` would cache forever (stale code, and one copy kept per reload);
 * jiti without a module cache evaluates into objects the garbage collector can reclaim once
 * the previous version is no longer referenced.
 *
 * Returns the default export when there is one, else the module namespace.
 */
export async function importFresh(path: string): Promise<unknown> {
  // No transform cache on disk either: every reload's source is new (the cache would only grow,
  // one file per version, in the temp folder) and writing it costs more than it saves here.
  const jiti = createJiti(path, {
    moduleCache: false,
    fsCache: false,
    tryNative: false,
    interopDefault: true,
  });
  const namespace = (await jiti.import(path)) as Record<string, unknown> | undefined;
  return namespace !== null && typeof namespace === "object" && "default" in namespace
    ? namespace.default
    : namespace;
}
