import type { DrainedVersion, VersionCount } from "../deploys.js";
import type { RunRecord } from "../run.js";

/** What operators watch: live workers, stuck runs, and workflow versions (safe deploys). Part of the {@link Store} port. */
export interface OperationsStore {
  /** Records a live worker, or refreshes its heartbeat (upsert by workerId). */
  upsertWorker(worker: WorkerRecord): Promise<void>;
  /** Forgets a worker that stopped. */
  removeWorker(workerId: string): Promise<void>;
  /** Workers whose last heartbeat is after `since` (epoch ms), newest heartbeat first. */
  listWorkers(since: number): Promise<WorkerRecord[]>;
  /**
   * Non-terminal runs nobody will move: suspended with no due time and nothing to wait for,
   * or runnable (pending, suspended and due, running with an expired lease) for longer than
   * `graceMs` before `now` without being claimed. There should never be any.
   */
  listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]>;

  // ── safe deploys ──
  /** How many runs there are of each (workflow, version, status) that has any: one grouped query. */
  countVersions(): Promise<VersionCount[]>;
  /**
   * Marks a workflow version drained (no worker claims its runs) or undrains it. Idempotent; returns
   * true when something changed.
   */
  setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean>;
  /** Every drained version, by workflow then version. Workers read it on their heartbeat. */
  listDrainedVersions(): Promise<DrainedVersion[]>;
}

/** A worker, as the registry shows it. */
export interface WorkerRecord {
  workerId: string;
  host: string;
  pid: number;
  /** `name@version` of every workflow it runs. */
  workflows: string[];
  runsHeld: number;
  startedAt: number;
  heartbeatAt: number;
}
