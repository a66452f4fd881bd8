import { describe } from "vitest";
import { agentRowsSpec } from "./agent-rows-spec.js";
import { blobsSpec } from "./blobs-spec.js";
import { commitSpec } from "./commit-spec.js";
import { continueSpec } from "./continue-spec.js";
import { compactionSpec } from "./compaction-spec.js";
import { copySpec } from "./copy-spec.js";
import { flowSpec } from "./flow-spec.js";
import { deploysSpec } from "./deploys-spec.js";
import { useStore, type StoreFactory } from "./harness.js";
import { inboxSpec } from "./inbox-spec.js";
import { leasesSpec } from "./leases-spec.js";
import { liveSpec } from "./live-spec.js";
import { liveDeltasSpec } from "./live-deltas-spec.js";
import { outboxSpec } from "./outbox-spec.js";
import { resumeSpec } from "./resume-spec.js";
import { retentionSpec } from "./retention-spec.js";
import { searchSpec } from "./search-spec.js";
import { securitySpec } from "./security-spec.js";
import { runsSpec } from "./runs-spec.js";
import { runEntriesSpec } from "./run-entries-spec.js";
import { schedulesSpec } from "./schedules-spec.js";
import { sagaSpec } from "./saga-spec.js";
import { wakeSpec } from "./wake-spec.js";
import { workersSpec } from "./workers-spec.js";

export type { StoreFactory } from "./harness.js";

/**
 * The one conformance suite every `Store` passes: the memory, SQLite and PostgreSQL stores run
 * it, and a third-party store proves itself with it. Call it from a vitest test file with a factory
 * that creates an isolated, migrated store per test and disposes of it.
 *
 * @example
 * // my-store.test.ts
 * import { storeConformance } from "cairn/testing";
 * storeConformance("my-store", { create: async () => openMyStore(freshUrl()), destroy: (s) => s.close() });
 */
export function storeConformance(name: string, factory: StoreFactory): void {
  describe(`${name} store conformance`, () => {
    const store = useStore(factory);
    runsSpec(store);
    runEntriesSpec(store);
    commitSpec(store);
    wakeSpec(store);
    leasesSpec(store);
    inboxSpec(store);
    workersSpec(store);
    resumeSpec(store);
    searchSpec(store);
    securitySpec(store);
    copySpec(store);
    retentionSpec(store);
    compactionSpec(store);
    schedulesSpec(store);
    blobsSpec(store);
    sagaSpec(store);
    flowSpec(store);
    outboxSpec(store);
    deploysSpec(store);
    liveSpec(store);
    continueSpec(store);
    liveDeltasSpec(store);
    agentRowsSpec(store);
  });
}
