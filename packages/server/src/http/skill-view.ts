import type { JsonSchema, Skill } from "@skillbox/core";

/**
 * A skill as the API shows it. Loader internals — the handler reference, the source path, the
 * content hash, sandbox settings — stay out: they describe the server's disk, not the skill.
 */
export interface SkillView {
  id: string;
  name: string;
  version: string;
  description: string;
  /** The owner id; `system` and `public` skills are visible to every caller. */
  owner: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema | null;
  runtime: string;
  tags: string[];
  enabled: boolean;
  /** Per-attempt timeout in ms; null means the executor's default. */
  timeoutMs: number | null;
  createdAt: string;
  updatedAt: string;
}

/** The API's view of a registry skill. */
export function toSkillView(skill: Skill): SkillView {
  return {
    id: skill.id,
    name: skill.name,
    version: skill.version,
    description: skill.description,
    owner: skill.apiKeyId,
    inputSchema: skill.schema.input,
    outputSchema: skill.schema.output ?? null,
    runtime: skill.runtime,
    tags: skill.tags,
    enabled: skill.enabled,
    timeoutMs: skill.timeoutMs ?? null,
    createdAt: skill.createdAt,
    updatedAt: skill.updatedAt,
  };
}

/** A skill in `GET /api/skills` (one per name): the version a bare name runs, and all visible versions. */
export interface LatestSkillView extends SkillView {
  /** Every version of this name the caller can see, highest first. */
  versions: string[];
}
