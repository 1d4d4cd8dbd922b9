// A process of its own racing to claim executions of the shared record (started by
// sqlite-record-store.test.ts under `node --import jiti/register`, which loads the TypeScript
// sources). Arguments: the module of the store, the database file, the worker id. Prints
// "ready" once the store is open, claims every id of the JSON line it reads on stdin in turn,
// then prints the kinds of the answers as one JSON line and exits.
import { createInterface } from "node:readline";

const [modulePath, databasePath, workerId] = process.argv.slice(2);
const loaded = await import(modulePath);
// jiti hands TypeScript sources over as a CommonJS default export.
const { createSqliteRecordStore } = loaded.createSqliteRecordStore === undefined ? loaded.default : loaded;
const store = createSqliteRecordStore({ path: databasePath });
process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const ids = JSON.parse(line);
  const kinds = [];
  for (const executionId of ids) {
    kinds.push((await store.claim({ executionId, workerId, leaseMs: 60_000 })).kind);
  }
  process.stdout.write(`${JSON.stringify(kinds)}\n`);
  break;
}
lines.close();
await store.close();
