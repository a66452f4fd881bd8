import type * as S from "../../core/store.js";
import { ComposedStore } from "../common/composed-store.js";
import { MemoryBlobs } from "./memory-blobs.js";
import { MemoryFlow } from "./memory-flow.js";
import { MemoryHumanRequests } from "./memory-human-requests.js";
import { MemoryInbox } from "./memory-inbox.js";
import { MemoryJournal } from "./memory-journal.js";
import { MemoryLeases } from "./memory-leases.js";
import { MemoryLive } from "./memory-live.js";
import { MemoryLiveRuns } from "./memory-live-runs.js";
import { MemoryLiveDeltas } from "./memory-live-deltas.js";
import { MemoryOperations } from "./memory-operations.js";
import { MemoryOutbox } from "./memory-outbox.js";
import { MemoryRetention } from "./memory-retention.js";
import { MemoryRuns } from "./memory-runs.js";
import { MemorySchedules } from "./memory-schedules.js";
import { MemorySecurity } from "./memory-security.js";
import { MemoryStepSlots } from "./memory-step-flow.js";
import { MemoryTables } from "./memory-tables.js";
import { MemoryWriter } from "./memory-write.js";
import { listToolCalls, readAgentMessages } from "./memory-agent-rows.js";

/**
 * The reference {@link Store}: plain maps in one process, nothing durable.
 * It keeps exactly the rules of the SQLite and PostgreSQL stores (it passes the
 * same conformance suite), so it is the fastest way to test workflows.
 * Every method runs synchronously to completion, so each one is atomic.
 *
 * Each entity of the {@link Store} port has its own module (`memory-runs.ts`, `memory-journal.ts`, …),
 * all sharing one set of `MemoryTables` and the writes of `MemoryWriter`; `ComposedStore` forwards each
 * method of the port to its entity.
 *
 * @example
 * const store = new MemoryStore();
 * await store.createRun({ runId: "r1", workflow: "hello", version: "1", input: encode({}) }, Date.now());
 */
export class MemoryStore extends ComposedStore implements S.Store {
  /** Always `memory:`. */
  readonly url: "memory:";
  private readonly liveDeltaFeed: MemoryLiveDeltas;

  constructor() {
    const t = new MemoryTables();
    const outbox = new MemoryOutbox(t);
    const w = new MemoryWriter(t, new MemoryFlow(), new MemoryLive(t), outbox);
    const liveDeltas = new MemoryLiveDeltas();
    super({
      runs: new MemoryRuns(w),
      journal: new MemoryJournal(w),
      leases: new MemoryLeases(w),
      inbox: new MemoryInbox(w),
      humanRequests: new MemoryHumanRequests(w),
      outbox,
      operations: new MemoryOperations(t),
      security: new MemorySecurity(t),
      retention: new MemoryRetention(w),
      schedules: new MemorySchedules(),
      blobs: new MemoryBlobs(t),
      stepSlots: new MemoryStepSlots(w),
      liveRuns: new MemoryLiveRuns(w),
      liveDeltas,
      agentRows: {
        readAgentMessages: async (runId, options) => readAgentMessages(t, runId, options),
        listToolCalls: async (runId) => listToolCalls(t, runId),
      },
    });
    this.url = "memory:";
    this.liveDeltaFeed = liveDeltas;
  }

  /** Nothing to create. */
  async migrate(): Promise<void> {}

  /** Nothing to release. */
  async close(): Promise<void> {}

  /** See {@link Store.onLiveDeltas}: called (in a microtask) after every write. */
  onLiveDeltas(listener: () => void): () => void {
    return this.liveDeltaFeed.onLiveDeltas(listener);
  }
}
