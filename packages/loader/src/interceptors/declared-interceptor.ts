import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { InterceptorManifest } from "../manifest/manifest-schemas.js";
import { displayPath, type InterceptorPackage } from "../manifest/read-package.js";

/** The JSON of `file`: undefined when it is missing, `{}` when it does not parse. */
function readLoosely(file: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** A name glob or a list of them, as the manifest schema takes them (non-empty strings). */
function isPatternList(value: unknown): boolean {
  const isPattern = (item: unknown) => typeof item === "string" && item !== "";
  return isPattern(value) || (Array.isArray(value) && value.every(isPattern));
}

/** The declared `match` when it has the manifest's shape; anything else is no scope at all. */
function matchOf(value: unknown): InterceptorManifest["match"] {
  if (typeof value !== "object" || value === null) return undefined;
  const { names, tags, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) return undefined;
  if (names !== undefined && !isPatternList(names)) return undefined;
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((tag) => typeof tag === "string")))
    return undefined;
  return {
    ...(names === undefined ? {} : { names: names as string | string[] }),
    ...(tags === undefined ? {} : { tags: tags as string[] }),
  };
}

/**
 * What a folder whose manifest failed validation says about itself as an interceptor, read
 * leniently: enough to stand a fail-closed interceptor in for it (name, order, match, enabled).
 * Undefined when the folder is not an interceptor plugin (no `interceptor.json`, and no
 * package.json whose `"skillbox"` field has `kind: "interceptor"`). A missing or malformed
 * `match` counts as none: an unknown scope is every skill.
 */
export function declaredInterceptorOf(root: string): InterceptorPackage | undefined {
  let manifestFile = join(root, "interceptor.json");
  let declared = readLoosely(manifestFile);
  if (declared === undefined) {
    manifestFile = join(root, "package.json");
    const packageJson = readLoosely(manifestFile);
    const field = packageJson?.skillbox as Record<string, unknown> | undefined;
    if (typeof field !== "object" || field === null || field.kind !== "interceptor") return undefined;
    declared = { ...field, name: packageJson?.name };
  }
  const name =
    typeof declared.name === "string" && declared.name !== ""
      ? declared.name
      : `interceptor at ${displayPath(root)}`;
  const handler = typeof declared.handler === "string" ? declared.handler : "";
  const match = matchOf(declared.match);
  const manifest: InterceptorManifest = {
    name,
    handler,
    ...(typeof declared.order === "number" && Number.isFinite(declared.order)
      ? { order: declared.order }
      : {}),
    ...(match === undefined ? {} : { match }),
    ...(declared.enabled === false ? { enabled: false } : {}),
  };
  return { kind: "interceptor", root, manifestFile, manifest, handlerPath: resolve(root, handler) };
}
