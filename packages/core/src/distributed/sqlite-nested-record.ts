import type { SkillExecution } from "../types.js";
import { nestedRecordColumns } from "./nested-record-columns.js";
import { appendStatus, type SqliteRecordContext, subjectOf } from "./sqlite-record-context.js";
import { databaseNow } from "./sqlite-record-statements.js";

/**
 * `ExecutionRecordStore.recordNested` on SQLite: the final row (under the shared record's runner)
 * and its status event in one immediate transaction; a row with the id already there writes
 * nothing, its event included.
 */
export function recordNestedExecution(
  context: SqliteRecordContext,
  execution: SkillExecution,
  contentHash: string,
): void {
  const columns = nestedRecordColumns(execution, contentHash);
  const { database, statements } = context;
  database
    .transaction(() => {
      const inserted = statements.insertNested.run({ ...columns, runner: context.runnerKey });
      if (inserted.changes === 0) return;
      appendStatus(
        context,
        subjectOf({ id: columns.id, api_key_id: columns.apiKeyId, skill_name: columns.skillName }),
        columns.status,
        databaseNow(statements),
      );
    })
    .immediate();
}
