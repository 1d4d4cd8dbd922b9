import { pathToFileURL } from "node:url";
import type { DefinedSkill, SkillRegistration } from "@skillbox/core";
import { loaderMetadata } from "./loader-bookkeeping.js";
import type { SkillPackage } from "./read-package.js";
import { resolveSkillSchemas } from "./skill-schemas.js";

/** What the loader adds to a manifest to register it. */
export interface RegistrationContext {
  /** Hash of the package's files (changes on any edit). */
  codeHash: string;
  /** The module's `defineSkill` value, when the module was imported. */
  defined: DefinedSkill | undefined;
  owner: string;
  /** The watched folder (or `npm:<project>`) the package was found through. */
  origin: string;
  /** Where the handler module is loaded from when that is not the package itself (a snapshot). */
  loadPath?: string;
  /** The folder the code may reach: the package folder, or the bundle folder of a bundle member. */
  codeRoot: string;
}

/**
 * The durable-execution fields, set only when the manifest or `defineSkill` declares them (so a
 * package that declares none keeps its content hash). A `defineSkill` approval predicate stays
 * in the module: its wrapped handler asks for approval itself.
 */
function durableFields(
  manifest: SkillPackage["manifest"],
  defined: DefinedSkill | undefined,
): Pick<SkillRegistration, "approval" | "approvalTimeoutMs" | "concurrency" | "idempotent" | "queue"> {
  const fields: Pick<
    SkillRegistration,
    "approval" | "approvalTimeoutMs" | "concurrency" | "idempotent" | "queue"
  > = {};
  const approval = manifest.approval ?? (defined?.approval === "required" ? "required" : undefined);
  if (approval !== undefined) fields.approval = approval;
  const approvalTimeoutMs = manifest.approvalTimeoutMs ?? defined?.approvalTimeoutMs;
  if (approvalTimeoutMs !== undefined) fields.approvalTimeoutMs = approvalTimeoutMs;
  const concurrency = manifest.concurrency ?? defined?.concurrency;
  if (concurrency !== undefined) fields.concurrency = concurrency;
  const idempotent = manifest.idempotent ?? defined?.idempotent;
  if (idempotent !== undefined) fields.idempotent = idempotent;
  if (manifest.queue !== undefined) fields.queue = manifest.queue;
  return fields;
}

/**
 * The registration of a skill package. Schemas come from the manifest or from `defineSkill` in
 * the module, whichever declares them, and must agree when both do (see `resolveSkillSchemas`).
 * For the other fields a manifest that declares `input` is the whole definition; without it,
 * `defineSkill` fills the gaps.
 */
export function toRegistration(descriptor: SkillPackage, context: RegistrationContext): SkillRegistration {
  const { manifest } = descriptor;
  const schemas = resolveSkillSchemas(descriptor, context.defined);
  const defined = manifest.input === undefined ? context.defined : undefined;
  return {
    name: manifest.name,
    version: manifest.version,
    description: manifest.description ?? defined?.description ?? "",
    input: schemas.input ?? {},
    output: schemas.output,
    handler: pathToFileURL(descriptor.handlerPath).href,
    runtime: manifest.runtime ?? defined?.runtime ?? "inline",
    timeoutMs: manifest.timeoutMs ?? defined?.timeoutMs,
    retry: manifest.retry ?? defined?.retry,
    memoryMb: manifest.memoryMb ?? defined?.memoryMb,
    sandbox: manifest.sandbox ?? defined?.sandbox,
    requires: manifest.requires ?? defined?.requires,
    tags: manifest.tags ?? defined?.tags ?? [],
    enabled: manifest.enabled ?? true,
    apiKeyId: context.owner,
    source: descriptor.root,
    code: {
      modulePath: context.loadPath ?? descriptor.handlerPath,
      codeHash: context.codeHash,
      root: context.codeRoot,
    },
    ...(manifest.examples ? { examples: manifest.examples } : {}),
    ...durableFields(manifest, context.defined),
    metadata: loaderMetadata({
      root: descriptor.root,
      origin: context.origin,
      manifestEnabled: manifest.enabled ?? true,
    }),
  };
}
