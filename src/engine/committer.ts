import type { CommitResult, RunWrite, Store } from "../core/store.js";

interface Pending {
  write: RunWrite;
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

/**
 * Group commit: journal writes issued in the same tick, by any run on this engine,
 * are flushed in one store transaction. While a flush is in progress the next batch
 * gathers, so concurrent runs share commits.
 */
export class Committer {
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;
  /** Number of store transactions issued (for benchmarks and tests). */
  flushes = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: () => number,
  ) {}

  commit(write: RunWrite): Promise<CommitResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          this.flushes += 1;
          const results = await this.commitWithRetry(batch.map((p) => p.write));
          batch.forEach((pending, i) => pending.resolve(results[i]!));
        } catch (error) {
          for (const pending of batch) pending.reject(error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** A busy or briefly unavailable store is retried a few times before the writers hear of it. */
  private async commitWithRetry(writes: RunWrite[]): Promise<CommitResult[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store.commit(writes, this.clock());
      } catch (error) {
        if (attempt >= 6 || !isTransient(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      }
    }
  }
}

const TRANSIENT_CODES = new Set([
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "57P01", // admin_shutdown (backend terminated)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up)
  "08000",
  "08003",
  "08006", // connection failures
  "40001", // serialization_failure
  "40P01", // deadlock_detected
]);

/** Errors worth another try: a busy file, a dropped connection, a database restarting. */
export function isTransient(error: unknown): boolean {
  const candidate = error as { code?: unknown; message?: unknown } | null;
  if (typeof candidate?.code === "string" && TRANSIENT_CODES.has(candidate.code)) return true;
  return (
    typeof candidate?.message === "string" &&
    /Connection terminated|connection .*(closed|ended)|connection error and is not queryable|timeout exceeded when trying to connect/i.test(candidate.message)
  );
}
