import { RunSecrets } from "../core/redact.js";
import type { Store } from "../core/store.js";

const PAGE = 1000;
const MAX_RUNS = 2000;

/**
 * The secrets of recently viewed runs, each kept up to date by reading only the journal entries
 * after the last one it saw (one indexed read per view, usually empty). Views of a run — its row,
 * journal, stream, human requests — go through {@link SecretViews.of}; nothing on the commit path does.
 */
export class SecretViews {
  private readonly runs = new Map<string, RunSecrets>();

  constructor(private readonly store: Store) {}

  /** The run's secrets, up to (at least) the entries committed before this call. */
  async of(runId: string): Promise<RunSecrets> {
    let secrets = this.runs.get(runId);
    if (secrets) this.runs.delete(runId);
    else secrets = new RunSecrets();
    this.runs.set(runId, secrets); // most recently used last
    if (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.keys().next().value!);
    for (;;) {
      const entries = await this.store.readJournal(runId, { afterSeq: secrets.lastSeq, limit: PAGE });
      for (const entry of entries) if (entry.seq > secrets.lastSeq) secrets.add(entry);
      if (entries.length < PAGE) return secrets;
    }
  }
}
