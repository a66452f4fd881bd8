/** Live runs (docs/live-runs.md): tags, published values and replies, deadlines. Part of the {@link Store} port. */
export interface LiveRunStore {
  /** The run's tags (`{}` when it has none or does not exist). One indexed read. */
  getRunTags(runId: string): Promise<Record<string, string>>;
  /**
   * The latest value a run stored under `name`: what `ctx.publish` published (`kind: "published"`), or
   * a `ctx.handle` handler's reply to request `name` (`kind: "reply"`). One indexed read, whatever the
   * number of publishes: each commit of a `publish.value` / `request.replied` entry replaces its row.
   */
  getRunValue(runId: string, kind: RunValueKind, name: string): Promise<RunValue | undefined>;
  /**
   * Deadlines that fell due at `now` (`dueAt <= now`) of runs that are not terminal, earliest first.
   * A deadline is a row written with its run (`NewRun.deadlineAt`), so it fires even if every worker
   * was down when it fell due.
   */
  listDueDeadlines(now: number, limit: number): Promise<RunDeadline[]>;
  /** Forgets a run's deadline (it fired, or the run ended). False when there was none. */
  clearDeadline(runId: string): Promise<boolean>;
}

/** What a run value row holds: a published value or a request's reply. */
export type RunValueKind = "published" | "reply";
/** A run's value as {@link Store.getRunValue} reads it. */
export interface RunValue {
  runId: string;
  kind: RunValueKind;
  name: string;
  /** The encoded value (for a reply: the encoded `{ reply }` or `{ error }` of its `request.replied` entry). */
  value: string;
  /** The seq of the entry that wrote it. */
  seq: number;
  /** When that entry was written (epoch ms). */
  at: number;
}
/** A run's deadline (see {@link Store.listDueDeadlines}). */
export interface RunDeadline {
  runId: string;
  dueAt: number;
}
