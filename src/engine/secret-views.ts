import type { EntryData } from "../core/journal.js";
import { RunSecrets } from "../core/redact.js";
import { elidedSize } from "../core/payloads.js";
import { decode } from "../core/serialize.js";
import type { JournalEntry } from "../core/journal.js";
import type { Store } from "../core/store.js";

const PAGE = 1000;
/** Entries larger than this are read one at a time (see `of`). */
const LARGE = 64 * 1024;
const MAX_RUNS = 2000;

/** A run's secrets, and what else its views show from its journal. */
export class RunFacts extends RunSecrets {
  /** From the newest `run.forked` entry: what this run was forked from. */
  forkedFrom: { runId: string; atSeq: number; version?: string } | undefined;
}

/**
 * The secrets (and fork origin) of recently viewed runs, each kept up to date by reading only the journal entries
 * after the last one it saw (one indexed read per view, usually empty). Views of a run — its row,
 * journal, stream, human requests — go through {@link SecretViews.of}; nothing on the commit path does.
 */
export class SecretViews {
  private readonly runs = new Map<string, RunFacts>();

  constructor(private readonly store: Pick<Store, "readJournal">) {}

  /** The run's secrets, up to (at least) the entries committed before this call. */
  async of(runId: string): Promise<RunFacts> {
    let secrets = this.runs.get(runId);
    if (secrets) this.runs.delete(runId);
    else secrets = new RunFacts();
    this.runs.set(runId, secrets); // most recently used last
    if (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.keys().next().value!);
    for (;;) {
      // Large payloads are not loaded a page at a time: each is read alone, so one view holds at most one.
      const entries = await this.store.readJournal(runId, { afterSeq: secrets.lastSeq, limit: PAGE, previewBytes: LARGE });
      for (const previewed of entries) {
        if (previewed.seq <= secrets.lastSeq) continue;
        const entry = elidedSize(previewed.payload, Infinity) === undefined ? previewed : await this.whole(runId, previewed);
        secrets.add(entry);
        if (entry.kind === "run.forked") {
          let forked: EntryData["run.forked"];
          try {
            forked = decode<EntryData["run.forked"]>(entry.payload);
          } catch {
            continue; // an unreadable marker: the view shows no origin rather than no run
          }
          secrets.forkedFrom = { runId: forked.fromRunId, atSeq: forked.atSeq, ...(forked.fromVersion === undefined ? {} : { version: forked.fromVersion }) };
        }
      }
      if (entries.length < PAGE) return secrets;
    }
  }

  private async whole(runId: string, entry: JournalEntry): Promise<JournalEntry> {
    return (await this.store.readJournal(runId, { afterSeq: entry.seq - 1, limit: 1 }))[0] ?? entry;
  }
}
