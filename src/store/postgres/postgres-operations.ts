import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import type { RunRecord } from "../../core/run.js";
import type { OperationsStore, WorkerRecord } from "../../core/store.js";
import { pageLimit } from "../common/list-query.js";
import type { PostgresConnection } from "./postgres-connection.js";
import {
  COUNT_VERSIONS,
  DRAIN_VERSION,
  LIST_DRAINED,
  LIST_WORKERS,
  REMOVE_WORKER,
  STUCK_RUNS,
  UNDRAIN_VERSION,
  UPSERT_WORKER,
} from "./postgres-operations-queries.js";
import { toRun, toWorker, type StateRow, type WorkerRow } from "./postgres-rows.js";

/** The {@link OperationsStore} part of {@link PostgresStore}: the worker registry, stuck runs, and versions and their drains. */
export class PostgresOperations implements OperationsStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.upsertWorker}. In database-clock mode the heartbeat (and a new worker's start) is the database's time. */
  async upsertWorker(worker: WorkerRecord): Promise<void> {
    const database = this.db.config.clock === "database";
    await this.db.query(UPSERT_WORKER, [
      worker.workerId,
      worker.host,
      worker.pid,
      JSON.stringify(worker.workflows),
      worker.runsHeld,
      database ? null : worker.startedAt,
      database ? null : worker.heartbeatAt,
    ]);
  }

  /** See {@link Store.removeWorker}. */
  async removeWorker(workerId: string): Promise<void> {
    await this.db.query(REMOVE_WORKER, [workerId]);
  }

  /** See {@link Store.listWorkers}. */
  async listWorkers(since: number): Promise<WorkerRecord[]> {
    return (await this.db.query<WorkerRow>(LIST_WORKERS, [since])).map(toWorker);
  }

  /** See {@link Store.listStuckRuns}. In database-clock mode `now` is ignored. */
  async listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]> {
    const rows = await this.db.query<StateRow & { input: string }>(STUCK_RUNS, [this.db.runner.nowParam(now), graceMs, pageLimit(limit)]);
    return rows.map(toRun);
  }

  /** See {@link Store.countVersions}. */
  async countVersions(): Promise<VersionCount[]> {
    const rows = await this.db.query<VersionCount>(COUNT_VERSIONS);
    return rows.map((row) => ({ workflow: row.workflow, version: row.version, status: row.status, count: Number(row.count) }));
  }

  /** See {@link Store.setVersionDrained}. */
  async setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean> {
    return this.db.tx(now, async (tx) => {
      const rows = drained
        ? await tx.query(`${DRAIN_VERSION.text} RETURNING 1`, [workflow, version, tx.now])
        : await tx.query(`${UNDRAIN_VERSION.text} RETURNING 1`, [workflow, version]);
      return rows.length > 0;
    });
  }

  /** See {@link Store.listDrainedVersions}. */
  async listDrainedVersions(): Promise<DrainedVersion[]> {
    const rows = await this.db.query<{ workflow: string; version: string; drainedAt: string | number }>(LIST_DRAINED);
    return rows.map((row) => ({ workflow: row.workflow, version: row.version, drainedAt: Number(row.drainedAt) }));
  }
}
