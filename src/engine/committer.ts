import type { CommitResult, JournalStore, RunWrite } from "../core/store.js";

interface Pending {
  write: RunWrite;
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

/**
 * Group commit: journal writes issued in the same tick, by any run on this engine, are flushed in
 * one store transaction. Up to `writers` transactions are in flight at once (the store's
 * `commitWriters`: several on PostgreSQL, one on a single-writer store); while they are, the next
 * batch gathers, so concurrent runs share commits.
 *
 * Per-run order: a run with a write in a transaction in flight has its later writes held back
 * until that transaction ends, so a run's writes never race each other into two transactions
 * and reach the store in the order they were issued (a run's next commit never overtakes its
 * previous one). Writes of one run that gathered together go, in order, into the same batch.
 */
export class Committer {
  private queue: Pending[] = [];
  private inFlight = 0;
  /** Runs with a write in a transaction in flight. */
  private readonly busy = new Set<string>();
  private scheduled = false;
  private readonly writers: number;
  /** Number of store transactions issued (for benchmarks and tests). */
  flushes = 0;
  /** Most transactions that were in flight at once (for benchmarks and tests). */
  peakInFlight = 0;

  constructor(
    private readonly store: JournalStore,
    private readonly clock: () => number,
    writers = store.commitWriters ?? 1,
  ) {
    this.writers = Math.max(1, Math.floor(writers));
  }

  commit(write: RunWrite): Promise<CommitResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.writers) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.fill();
    });
  }

  /** Starts transactions while a writer is free and writes of runs not in flight wait. */
  private fill(): void {
    while (this.inFlight < this.writers) {
      const batch = this.take();
      if (batch.length === 0) return;
      void this.flush(batch);
    }
  }

  /** Takes the queued writes of runs not in flight (keeping the others queued, in order) and marks their runs busy. */
  private take(): Pending[] {
    if (this.queue.length === 0) return [];
    const batch: Pending[] = [];
    const held: Pending[] = [];
    for (const pending of this.queue) (this.busy.has(pending.write.runId) ? held : batch).push(pending);
    this.queue = held;
    for (const pending of batch) this.busy.add(pending.write.runId);
    return batch;
  }

  private async flush(batch: Pending[]): Promise<void> {
    this.inFlight += 1;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    this.flushes += 1;
    try {
      const results = await this.commitWithRetry(batch.map((p) => p.write));
      batch.forEach((pending, i) => pending.resolve(results[i]!));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      this.inFlight -= 1;
      for (const pending of batch) this.busy.delete(pending.write.runId);
      // What gathered meanwhile goes at once (its writers have waited a whole transaction already).
      this.fill();
    }
  }

  /** A busy store, or one that refused the connection, is retried a few times before the writers hear of it. */
  private async commitWithRetry(writes: RunWrite[]): Promise<CommitResult[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store.commit(writes, this.clock());
      } catch (error) {
        if (attempt >= 6 || !commitNotApplied(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      }
    }
  }
}

/**
 * Errors that say the commit was NOT applied: the database was busy, refused the connection or
 * rolled the transaction back. Such a commit runs again.
 */
const NOT_APPLIED_CODES = new Set([
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "ECONNREFUSED", // no connection was made
  "57P03", // cannot_connect_now (starting up)
  "40001", // serialization_failure (rolled back)
  "40P01", // deadlock_detected (rolled back)
]);

/**
 * True when a failed commit certainly wrote nothing, so running it again cannot journal its
 * entries twice. A connection lost while the commit was in flight (terminated, reset, timed out,
 * the server shutting down) is not such an error: the server may have committed before the reply
 * was lost, and the same entries appended again would follow them in the journal. The writer then
 * abandons its execution, and the run resumes from whatever the journal holds.
 */
export function commitNotApplied(error: unknown): boolean {
  const candidate = error as { code?: unknown; message?: unknown } | null;
  if (typeof candidate?.code === "string" && NOT_APPLIED_CODES.has(candidate.code)) return true;
  return typeof candidate?.message === "string" && /timeout exceeded when trying to connect/i.test(candidate.message);
}
