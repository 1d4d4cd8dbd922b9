import { isAbsolute, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type Skill, SkillboxError } from "@skillbox/core";

/**
 * How engines say an image is not in their store: podman (`image not known`, `no such image`,
 * `unable to find`) and docker and the engines behind its CLI (`Unable to find image`,
 * `No such image`). Sandboxes run with `--pull never`, so a missing image is never fetched.
 */
const MISSING_IMAGE_PATTERN = /image not known|no such image|unable to find/i;

/** The images `scripts/build-test-image.sh` builds: the default image, and one per host node version. */
const BUILD_SCRIPT_IMAGES = new Set([
  "localhost/skillbox-node:latest",
  `localhost/skillbox-node:${process.versions.node}`,
]);

/** Ships in the package (`files`), one level above both `src/` and `dist/`. */
const BUILD_SCRIPT = fileURLToPath(new URL("../scripts/build-test-image.sh", import.meta.url));

/** What a missing-image error needs to know. */
export interface MissingImageErrorOptions {
  skill: Skill;
  /** The image the sandbox was started with. */
  image: string;
  /** The provider that ran it (`podman`, `docker`, …). */
  provider: string;
  /** The engine's stderr (its tail). */
  stderr: string;
  data: Record<string, unknown>;
}

/** The engine command a user types: podman's own, docker's CLI for every docker-compatible engine. */
function engineCommand(provider: string): string {
  return provider === "podman" ? "podman" : "docker";
}

/** The build script as the user can type it: relative to the working folder when it is inside it. */
function buildScriptPath(): string {
  const fromHere = relative(process.cwd(), BUILD_SCRIPT);
  return fromHere.startsWith("..") || isAbsolute(fromHere) ? BUILD_SCRIPT : fromHere;
}

/** Which setting chose the image, so the user knows what to change. */
function imageSource(skill: Skill): string {
  return skill.sandbox?.image !== undefined
    ? "set by the skill's sandbox.image"
    : "the container runtime's defaultImage: the CLI's sandbox.image in skillbox.config, else the built-in default";
}

/**
 * The error for a sandbox whose engine could not find its image, naming the image, the setting
 * that chose it and how to get it: the build script for Skillbox's own test image, the engine's
 * `pull`/`build` for any other. `undefined` when `stderr` is about something else.
 */
export function missingImageError(options: MissingImageErrorOptions): SkillboxError | undefined {
  if (!MISSING_IMAGE_PATTERN.test(options.stderr)) return undefined;
  const { skill, image } = options;
  const engine = engineCommand(options.provider);
  const fix = BUILD_SCRIPT_IMAGES.has(image)
    ? `build it with \`bash ${buildScriptPath()} ${engine}\``
    : `build or pull it with ${engine} (\`${engine} pull ${image}\`, or \`${engine} build -t ${image} <folder>\`), ` +
      "or name another image there";
  return new SkillboxError(
    "SANDBOX_FAILED",
    `${skill.name}@${skill.version}: the image ${image} (${imageSource(skill)}) is not in ${options.provider}'s ` +
      `image store, and sandboxes never pull: ${fix}`,
    { data: { ...options.data, image }, retryable: false },
  );
}
