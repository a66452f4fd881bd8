import type { RunRecord } from "../core/run.js";
import type { NewRun, Store } from "../core/store.js";

type Created = { run: RunRecord; created: boolean };

interface Pending {
  run: NewRun;
  resolve(result: Created): void;
  reject(error: unknown): void;
}

/**
 * Group commit for `engine.start`: runs started while a creation is in progress are
 * created together, in one store transaction. A start with nothing in progress goes to
 * the store at once, so a lone start waits for no tick.
 */
export class RunCreator {
  private queue: Pending[] = [];
  private flushing = false;

  constructor(
    private readonly store: Pick<Store, "createRun" | "createRuns">,
    private readonly clock: () => number,
  ) {}

  create(run: NewRun): Promise<Created> {
    return new Promise((resolve, reject) => {
      this.queue.push({ run, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        if (batch.length === 1) {
          await this.one(batch[0]!);
          continue;
        }
        try {
          const results = await this.store.createRuns(
            batch.map((p) => p.run),
            this.clock(),
          );
          batch.forEach((pending, i) => pending.resolve(results[i]!));
        } catch {
          // One bad run (or a failed transaction) must not fail the others: create them one by one.
          for (const pending of batch) await this.one(pending);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async one(pending: Pending): Promise<void> {
    try {
      pending.resolve(await this.store.createRun(pending.run, this.clock()));
    } catch (error) {
      pending.reject(error);
    }
  }
}
