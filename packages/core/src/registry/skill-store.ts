import { createHash, randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import type { Skill } from "../types.js";

interface SkillRow {
  id: string;
  api_key_id: string;
  name: string;
  version: string;
  description: string;
  input_schema: string;
  output_schema: string | null;
  handler: string;
  runtime: string;
  timeout_ms: number | null;
  retry: string | null;
  memory_mb: number | null;
  sandbox: string | null;
  requires: string | null;
  tags: string;
  enabled: number;
  source: string;
  content_hash: string;
  code: string | null;
  examples: string | null;
  approval: string | null;
  approval_timeout_ms: number | null;
  concurrency: number | null;
  idempotent: number;
  queue: string | null;
  metadata: string | null;
  created_at: number;
  updated_at: number;
}

/** The fields of a skill that define it (everything but id and timestamps). */
export type SkillDefinition = Omit<Skill, "id" | "createdAt" | "updatedAt" | "contentHash">;

const parseOptional = <T>(text: string | null): T | undefined =>
  text === null ? undefined : (JSON.parse(text) as T);

const stringifyOptional = (value: unknown): string | null =>
  value === undefined ? null : JSON.stringify(value);

function rowToSkill(row: SkillRow): Skill {
  const output = parseOptional<Record<string, unknown>>(row.output_schema);
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    description: row.description,
    apiKeyId: row.api_key_id,
    schema:
      output === undefined
        ? { input: JSON.parse(row.input_schema) }
        : { input: JSON.parse(row.input_schema), output },
    handler: row.handler,
    runtime: row.runtime,
    timeoutMs: row.timeout_ms ?? undefined,
    retry: parseOptional(row.retry),
    memoryMb: row.memory_mb ?? undefined,
    sandbox: parseOptional(row.sandbox),
    requires: parseOptional(row.requires),
    tags: JSON.parse(row.tags) as string[],
    enabled: row.enabled === 1,
    source: row.source,
    contentHash: row.content_hash,
    code: parseOptional(row.code),
    examples: parseOptional(row.examples),
    ...durableFieldsOf(row),
    metadata: parseOptional(row.metadata),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The durable-execution fields of a row, present only when set (so they stay out of older skills' hashes). */
function durableFieldsOf(
  row: SkillRow,
): Pick<Skill, "approval" | "approvalTimeoutMs" | "concurrency" | "idempotent" | "queue"> {
  const fields: Pick<Skill, "approval" | "approvalTimeoutMs" | "concurrency" | "idempotent" | "queue"> = {};
  if (row.approval === "required") fields.approval = "required";
  if (row.approval_timeout_ms !== null) fields.approvalTimeoutMs = row.approval_timeout_ms;
  if (row.concurrency !== null) fields.concurrency = row.concurrency;
  if (row.idempotent === 1) fields.idempotent = true;
  if (row.queue !== null) fields.queue = row.queue;
  return fields;
}

/** Stable hash of a definition, so re-registering an unchanged skill writes nothing. */
function hashSkillDefinition(definition: SkillDefinition): string {
  const canonical = JSON.stringify(definition, (_key, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
      : value,
  );
  return createHash("sha256").update(canonical).digest("hex");
}

/** The SQL side of the registry: prepared statements over the `skills` table. */
export class SkillStore {
  private readonly statements;

  constructor(private readonly database: Database.Database) {
    this.statements = {
      selectAll: database.prepare<[], SkillRow>("SELECT * FROM skills"),
      selectByKey: database.prepare<[string, string, string], SkillRow>(
        "SELECT * FROM skills WHERE api_key_id = ? AND name = ? AND version = ?",
      ),
      selectById: database.prepare<[string], SkillRow>("SELECT * FROM skills WHERE id = ?"),
      insert: database.prepare(
        `INSERT INTO skills (id, api_key_id, name, version, description, input_schema, output_schema, handler,
           runtime, timeout_ms, retry, memory_mb, sandbox, requires, tags, enabled, source, content_hash, code,
           examples, approval, approval_timeout_ms, concurrency, idempotent, queue, metadata, created_at, updated_at)
         VALUES (@id, @api_key_id, @name, @version, @description, @input_schema, @output_schema, @handler,
           @runtime, @timeout_ms, @retry, @memory_mb, @sandbox, @requires, @tags, @enabled, @source, @content_hash,
           @code, @examples, @approval, @approval_timeout_ms, @concurrency, @idempotent, @queue, @metadata, @created_at,
           @updated_at)`,
      ),
      update: database.prepare(
        `UPDATE skills SET description = @description, input_schema = @input_schema, output_schema = @output_schema,
           handler = @handler, runtime = @runtime, timeout_ms = @timeout_ms, retry = @retry, memory_mb = @memory_mb,
           sandbox = @sandbox, requires = @requires, tags = @tags, enabled = @enabled, source = @source,
           content_hash = @content_hash, code = @code, examples = @examples, approval = @approval,
           approval_timeout_ms = @approval_timeout_ms, concurrency = @concurrency, idempotent = @idempotent, queue = @queue,
           metadata = @metadata, updated_at = @updated_at
         WHERE id = @id`,
      ),
      deleteById: database.prepare<[string]>("DELETE FROM skills WHERE id = ?"),
      setEnabled: database.prepare<[number, number, string]>(
        "UPDATE skills SET enabled = ?, updated_at = ? WHERE id = ?",
      ),
      revision: database
        .prepare<[], number>("SELECT value FROM skillbox_meta WHERE key = 'skills_revision'")
        .pluck(),
    };
  }

  /** Bumped by triggers on every write to `skills`, by any process. */
  revision(): number {
    return this.statements.revision.get() as number;
  }

  /** All skills plus the revision they belong to, read in one snapshot. */
  readAll(): { skills: Skill[]; revision: number } {
    return this.database.transaction(() => ({
      skills: this.statements.selectAll.all().map(rowToSkill),
      revision: this.revision(),
    }))();
  }

  findById(id: string): Skill | undefined {
    const row = this.statements.selectById.get(id);
    return row === undefined ? undefined : rowToSkill(row);
  }

  /**
   * Inserts or updates `owner/name/version`. Returns the stored skill and whether anything
   * was written (an identical definition is left untouched). Call inside a write transaction.
   */
  upsert(definition: SkillDefinition): { skill: Skill; written: boolean } {
    const contentHash = hashSkillDefinition(definition);
    const existing = this.statements.selectByKey.get(
      definition.apiKeyId,
      definition.name,
      definition.version,
    );
    // `setEnabled` changes only the column, so an identical hash alone does not mean identical.
    if (existing?.content_hash === contentHash && existing.enabled === (definition.enabled ? 1 : 0)) {
      return { skill: rowToSkill(existing), written: false };
    }
    const now = Date.now();
    const id = existing?.id ?? randomUUID();
    const row: SkillRow = {
      id,
      api_key_id: definition.apiKeyId,
      name: definition.name,
      version: definition.version,
      description: definition.description,
      input_schema: JSON.stringify(definition.schema.input),
      output_schema: stringifyOptional(definition.schema.output),
      handler: definition.handler,
      runtime: definition.runtime,
      timeout_ms: definition.timeoutMs ?? null,
      retry: stringifyOptional(definition.retry),
      memory_mb: definition.memoryMb ?? null,
      sandbox: stringifyOptional(definition.sandbox),
      requires: stringifyOptional(definition.requires),
      tags: JSON.stringify(definition.tags),
      enabled: definition.enabled ? 1 : 0,
      source: definition.source,
      content_hash: contentHash,
      code: stringifyOptional(definition.code),
      examples: stringifyOptional(definition.examples),
      approval: definition.approval ?? null,
      approval_timeout_ms: definition.approvalTimeoutMs ?? null,
      concurrency: definition.concurrency ?? null,
      idempotent: definition.idempotent === true ? 1 : 0,
      queue: definition.queue ?? null,
      metadata: stringifyOptional(definition.metadata),
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
    if (existing === undefined) this.statements.insert.run(row);
    else this.statements.update.run(row);
    return { skill: rowToSkill(row), written: true };
  }

  deleteById(id: string): boolean {
    return this.statements.deleteById.run(id).changes > 0;
  }

  setEnabled(id: string, enabled: boolean): boolean {
    return this.statements.setEnabled.run(enabled ? 1 : 0, Date.now(), id).changes > 0;
  }
}
