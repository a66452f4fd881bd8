import type { StoreConnection } from "./store/connection.js";
import type { RunStore } from "./store/runs.js";
import type { JournalStore } from "./store/journal.js";
import type { LeaseStore } from "./store/leases.js";
import type { InboxStore } from "./store/inbox.js";
import type { HumanRequestStore } from "./store/human-requests.js";
import type { OutboxStore } from "./store/outbox.js";
import type { OperationsStore } from "./store/operations.js";
import type { SecurityStore } from "./store/security.js";
import type { RetentionStore } from "./store/retention.js";
import type { ScheduleStore } from "./store/schedules.js";
import type { BlobStore } from "./store/blobs.js";
import type { StepSlotStore } from "./store/step-slots.js";
import type { LiveRunStore } from "./store/live-runs.js";
import type { LiveDeltaStore } from "./live-delta-store.js";
import type { AgentRowStore } from "./store/agent-rows.js";

export type * from "./store/connection.js";
export type * from "./store/runs.js";
export type * from "./store/journal.js";
export type * from "./store/leases.js";
export type * from "./store/inbox.js";
export type * from "./store/human-requests.js";
export type * from "./store/outbox.js";
export type * from "./store/operations.js";
export type * from "./store/security.js";
export type * from "./store/retention.js";
export type * from "./store/schedules.js";
export type * from "./store/blobs.js";
export type * from "./store/step-slots.js";
export type * from "./store/live-runs.js";
export type * from "./store/agent-rows.js";

/**
 * The Store port: everything the engine needs from storage, and nothing more, as one
 * interface per entity (in `core/store/`); consumers that need one entity take that slice.
 * Implementations (memory, SQLite, PostgreSQL) pass one conformance suite
 * (`src/store/conformance`). All times are epoch milliseconds passed in by the
 * caller, so tests can drive the clock.
 *
 * Rules every implementation keeps:
 * - `commit` applies each {@link RunWrite} atomically and only if the run's
 *   `leaseEpoch` equals `write.epoch` and the run is not terminal (one writer per run).
 * - entries get `seq = lastSeq + 1, …` with no gaps; the run row is updated with
 *   {@link projectEntry} for every entry, in the same transaction.
 * - entry side tables are projections too: `event.received` marks its inbox row
 *   consumed, `child.started` creates the child run, `human.requested` /
 *   `human.answered` maintain the human-request table, terminal run entries wake the parent.
 *
 * Live deltas (ephemeral, never journaled) are the {@link LiveDeltaStore} part, in `live-delta-store.ts`.
 */
export interface Store
  extends
    StoreConnection,
    RunStore,
    JournalStore,
    LeaseStore,
    InboxStore,
    HumanRequestStore,
    OutboxStore,
    OperationsStore,
    SecurityStore,
    RetentionStore,
    ScheduleStore,
    BlobStore,
    StepSlotStore,
    LiveRunStore,
    LiveDeltaStore,
    AgentRowStore {}
