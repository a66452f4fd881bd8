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
        if (attempt >= 4 || !isTransient(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      }
    }
  }
}

function isTransient(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" || code === "ECONNRESET" || code === "57P01";
}
