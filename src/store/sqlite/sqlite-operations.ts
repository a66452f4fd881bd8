import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import type { RunRecord } from "../../core/run.js";
import type { OperationsStore, WorkerRecord } from "../../core/store.js";
import { pageLimit } from "../common/list-query.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { COUNT_VERSIONS, DRAIN_VERSION, LIST_DRAINED, UNDRAIN_VERSION } from "./sqlite-operations-queries.js";
import { toRun, toWorker, workerParams, type StateRow, type WorkerRow } from "./sqlite-rows.js";

/** The {@link OperationsStore} part of {@link SqliteStore}: the worker registry, stuck runs, and versions and their drains. */
export class SqliteOperations implements OperationsStore {
  constructor(private readonly c: SqliteConnection) {}

  /** See {@link Store.upsertWorker}. */
  async upsertWorker(worker: WorkerRecord): Promise<void> {
    this.c.q.upsertWorker.run(workerParams(worker));
  }

  /** See {@link Store.removeWorker}. */
  async removeWorker(workerId: string): Promise<void> {
    this.c.q.removeWorker.run(workerId);
  }

  /** See {@link Store.listWorkers}. */
  async listWorkers(since: number): Promise<WorkerRecord[]> {
    return (this.c.q.listWorkers.all(since) as WorkerRow[]).map(toWorker);
  }

  /** See {@link Store.listStuckRuns}. */
  async listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]> {
    const rows = this.c.q.stuckRuns.all({ before: now - graceMs, limit: pageLimit(limit) }) as (StateRow & { input: string })[];
    return rows.map(toRun);
  }

  /** See {@link Store.countVersions}. */
  async countVersions(): Promise<VersionCount[]> {
    const rows = this.c.q.prepared(COUNT_VERSIONS).all() as VersionCount[];
    return rows.map((row) => ({ workflow: row.workflow, version: row.version, status: row.status, count: Number(row.count) }));
  }

  /** See {@link Store.setVersionDrained}. */
  async setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean> {
    const statement = drained ? this.c.q.prepared(DRAIN_VERSION) : this.c.q.prepared(UNDRAIN_VERSION);
    return (drained ? statement.run(workflow, version, now) : statement.run(workflow, version)).changes > 0;
  }

  /** See {@link Store.listDrainedVersions}. */
  async listDrainedVersions(): Promise<DrainedVersion[]> {
    const rows = this.c.q.prepared(LIST_DRAINED).all() as DrainedVersion[];
    return rows.map((row) => ({ workflow: row.workflow, version: row.version, drainedAt: Number(row.drainedAt) }));
  }
}
