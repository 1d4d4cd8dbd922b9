import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { SkillboxError } from "@skillbox/core";

/**
 * Resolves `path` (from a manifest field) against the package folder and proves the result stays
 * inside it: no absolute paths, no `..`, and no symlink that leads out. Returns the real path.
 */
export function resolveInsidePackage(root: string, path: string, file: string, field: string): string {
  const refuse = (reason: string) =>
    new SkillboxError("MANIFEST_INVALID", `${file}: \`${field}\` ${reason}, got ${JSON.stringify(path)}`, {
      data: { file, field },
    });
  if (isAbsolute(path) || /^[a-zA-Z]:[\\/]/.test(path))
    throw refuse("must be a relative path inside the package");
  if (path.split(/[\\/]/).includes("..")) throw refuse("must not leave the package folder (no `..`)");
  let realRoot: string;
  let realTarget: string;
  try {
    realRoot = realpathSync(root);
    realTarget = realpathSync(resolve(root, path));
  } catch {
    throw refuse("names a file that does not exist");
  }
  const inside = relative(realRoot, realTarget);
  if (inside === "" || inside.startsWith(`..${sep}`) || inside === ".." || isAbsolute(inside)) {
    throw refuse("resolves (through a symlink) to a file outside the package");
  }
  return realTarget;
}
