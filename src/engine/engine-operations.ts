import { z } from "zod";
import { ValidationError } from "../core/errors.js";
import type { QueueLimits } from "../core/flow-control.js";
import type { JournalFile, ReplayReport, VersionSummary } from "../core/deploys.js";
import { listOutboxLibraryQuerySchema, type ListOutboxQuery, type OutboxMessage } from "../core/outbox.js";
import { runIdRefSchema as RUN_REF } from "../core/schemas.js";
import type { Store, WorkerRecord } from "../core/store.js";
import { check } from "./check-input.js";
import { replayRun, summarizeVersions } from "./deploys.js";
import { queueStates, type QueueState } from "./queue-state.js";
import type { WorkerPool } from "./worker-pool.js";
import type { WorkflowRegistry } from "./workflow-registry.js";

/** What the operator's views and actions need from the engine. */
export interface EngineOperationsDeps {
  /** The whole port: `replay` hands it to the dry replay. */
  store: Store;
  clock: () => number;
  pool: WorkerPool;
  workflows: WorkflowRegistry;
  queues: readonly QueueLimits[];
}

/** What operators look at and act on besides runs: queues, workers, versions (safe deploys), replays, the outbox. */
export class EngineOperations {
  constructor(private readonly deps: EngineOperationsDeps) {}

  async listQueues(): Promise<QueueState[]> {
    return queueStates(await this.deps.store.queueStats(this.deps.clock()), this.deps.queues);
  }

  listWorkers(staleAfterMs: number): Promise<WorkerRecord[]> {
    return this.deps.store.listWorkers(this.deps.clock() - staleAfterMs);
  }

  async listVersions(): Promise<VersionSummary[]> {
    const [counts, drained] = await Promise.all([this.deps.store.countVersions(), this.deps.store.listDrainedVersions()]);
    return summarizeVersions(counts, drained, this.deps.workflows.byKey.keys());
  }

  /** Retires a version (no worker claims its runs) or reinstates it; true when something changed. */
  async setRetired(workflow: string, version: string, retired: boolean): Promise<boolean> {
    const method = retired ? "retireVersion" : "reinstateVersion";
    check(z.string().min(1).max(200), workflow, `${method}: workflow`);
    check(z.string().min(1).max(200), version, `${method}: version`);
    // The store keeps the older word: a retired version is a `drained` row.
    const changed = await this.deps.store.setVersionDrained(workflow, version, retired, this.deps.clock());
    this.deps.pool.setDrained(workflow, version, retired);
    return changed;
  }

  replay(source: string | JournalFile): Promise<ReplayReport> {
    if (typeof source === "string") check(RUN_REF, source, "replay: runId");
    return replayRun(source, this.deps.store, this.deps.workflows.byKey);
  }

  async listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]> {
    check(listOutboxLibraryQuerySchema, query, "listOutbox");
    return this.deps.store.listOutbox(query);
  }

  async retryOutboxMessage(messageId: string): Promise<{ message: OutboxMessage; applied: boolean }> {
    if (typeof messageId !== "string" || messageId.length === 0) throw new ValidationError("retryOutboxMessage: pass a message id (`<runId>:<opKey>`).");
    const result = await this.deps.store.retryOutbox(messageId, this.deps.clock());
    if (result.applied) this.deps.pool.kickDispatchers();
    return result;
  }
}
