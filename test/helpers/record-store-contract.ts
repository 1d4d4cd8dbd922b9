import { describe } from "vitest";
import { claimCases } from "./record-store-contract/claims.js";
import { deadlineCases } from "./record-store-contract/deadlines.js";
import { decisionCases } from "./record-store-contract/decisions.js";
import type { OpenRecordStore } from "./record-store-contract/fixture.js";
import { nestedCases } from "./record-store-contract/nested.js";
import { noticeCases } from "./record-store-contract/notices.js";
import { recordCases } from "./record-store-contract/records.js";
import { recoveryCases } from "./record-store-contract/recovery.js";
import { statsCases } from "./record-store-contract/stats.js";

export type { OpenRecordStore, RecordStoreFixture } from "./record-store-contract/fixture.js";
/** Records and approvals as the contract makes them, for suites around a store (workers, sweepers). */
export { pendingApproval, queuedRecord } from "./record-store-contract/fixture.js";

/**
 * Registers the behaviour every `ExecutionRecordStore` must have (its JSDoc and the issue 19
 * contract) as vitest cases under `describe(name)`. Each case calls `open()` for a fresh, migrated
 * database and calls the fixture's `cleanup()` when it ends, passed or failed; the cross-process
 * cases open a second store on the same database with `openAnother()`.
 */
export function describeRecordStoreContract(name: string, open: OpenRecordStore): void {
  describe(`${name}: the ExecutionRecordStore contract`, () => {
    recordCases(open);
    claimCases(open);
    decisionCases(open);
    recoveryCases(open);
    deadlineCases(open);
    noticeCases(open);
    statsCases(open);
    nestedCases(open);
  });
}
