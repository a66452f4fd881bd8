import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import type { RunRecord } from "../../core/run.js";
import type { OperationsStore, WorkerRecord } from "../../core/store.js";
import { compareText, pageLimit } from "../common/list-query.js";
import { isStuck } from "../common/run-state.js";
import type { MemoryTables } from "./memory-tables.js";

/** The {@link OperationsStore} part of {@link MemoryStore}: the worker registry, stuck runs, and versions and their drains. */
export class MemoryOperations implements OperationsStore {
  private readonly drained = new Map<string, DrainedVersion>();

  constructor(private readonly t: MemoryTables) {}

  /** See {@link Store.upsertWorker}. */
  async upsertWorker(worker: WorkerRecord): Promise<void> {
    this.t.workers.set(worker.workerId, copyWorker(worker));
  }

  /** See {@link Store.removeWorker}. */
  async removeWorker(workerId: string): Promise<void> {
    this.t.workers.delete(workerId);
  }

  /** See {@link Store.listWorkers}. */
  async listWorkers(since: number): Promise<WorkerRecord[]> {
    const live = [...this.t.workers.values()].filter((worker) => worker.heartbeatAt > since);
    live.sort((a, b) => b.heartbeatAt - a.heartbeatAt || compareText(a.workerId, b.workerId));
    return live.map(copyWorker);
  }

  /** See {@link Store.listStuckRuns}. */
  async listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]> {
    const max = pageLimit(limit);
    const stuck = [...this.t.runs.values()].filter((run) => isStuck(run, now, graceMs));
    stuck.sort((a, b) => a.createdAt - b.createdAt || compareText(a.runId, b.runId));
    return stuck.slice(0, max).map((run) => ({ ...run }));
  }

  /** See {@link Store.countVersions}. */
  async countVersions(): Promise<VersionCount[]> {
    const counts = new Map<string, VersionCount>();
    for (const run of this.t.runs.values()) {
      const key = `${run.workflow}\u0000${run.version}\u0000${run.status}`;
      const found = counts.get(key);
      if (found) found.count += 1;
      else counts.set(key, { workflow: run.workflow, version: run.version, status: run.status, count: 1 });
    }
    return [...counts.values()].sort((a, b) => compareText(a.workflow, b.workflow) || compareText(a.version, b.version) || compareText(a.status, b.status));
  }

  /** See {@link Store.setVersionDrained}. */
  async setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean> {
    const key = `${workflow}@${version}`;
    if (drained === this.drained.has(key)) return false;
    if (drained) this.drained.set(key, { workflow, version, drainedAt: now });
    else this.drained.delete(key);
    return true;
  }

  /** See {@link Store.listDrainedVersions}. */
  async listDrainedVersions(): Promise<DrainedVersion[]> {
    return [...this.drained.values()].sort((a, b) => compareText(a.workflow, b.workflow) || compareText(a.version, b.version)).map((d) => ({ ...d }));
  }
}

function copyWorker(worker: WorkerRecord): WorkerRecord {
  return { ...worker, workflows: [...worker.workflows] };
}
