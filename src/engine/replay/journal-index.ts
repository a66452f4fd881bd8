import { isOutcome, type EntryData, type JournalEntry, type NewEntry } from "../../core/journal.js";
import { isCheckpoint, supersededBy } from "../../core/resume.js";
import { decode } from "../../core/serialize.js";
import type { DecodedEntry } from "../execution-types.js";
import { isSagaKind } from "../saga.js";

/** Sees every journal entry as it is indexed (the run's saga, or a dry replay's bookkeeping). */
export interface IndexObserver {
  /** Called for each entry, before the index looks at it. */
  entry?(raw: JournalEntry): void;
  /** Called for each journaled `step.completed` (a compensation or resource registers from it). */
  stepCompleted?(key: string, data: EntryData["step.completed"]): void;
}

/** A journaled outcome, in journal order. */
export interface JournaledOutcome {
  key: string;
  entry: DecodedEntry;
}

/**
 * The journal of one run by op key: what each op wrote, which loop iteration each key belongs to,
 * and which step failures a `run.retried` forgot. Saga entries (compensations, releases, a cancel's
 * notice) belong to the saga, not to any op's history. Live execution keeps it current as it writes.
 */
export class JournalIndex {
  private readonly history = new Map<string, DecodedEntry[]>();
  /** Keys whose terminal step failure a `run.retried` forgot: those steps run again. */
  private readonly forgotten = new Set<string>();
  /** Journaled op keys inside loop iterations, by iteration prefix (`<loopKey>/<iteration>/`). */
  private readonly byIteration = new Map<string, string[]>();

  /** Indexes a resume's entries; returns the outcomes to deliver, in journal order. */
  load(entries: readonly JournalEntry[], observer: IndexObserver = {}): JournaledOutcome[] {
    const outcomes: JournaledOutcome[] = [];
    const checkpoints = loopCheckpoints(entries);
    /** A resource acquired again on resume: its later outcome replaces the first in place (engine/ops/acquire.ts). */
    const acquisitions = new Map<string, JournaledOutcome>();
    for (const raw of entries) {
      observer.entry?.(raw);
      if (isSagaKind(raw.kind)) continue;
      if (checkpoints.size > 0 && raw.opKey !== null && supersededIteration(raw.opKey, raw.seq, checkpoints)) {
        // A registration a loop checkpoint kept: it belongs to the saga, its iteration never runs again.
        if (raw.kind === "step.completed") observer.stepCompleted?.(raw.opKey, decode(raw.payload));
        continue;
      }
      if (raw.kind === "run.retried") {
        // A retry forgets the terminal step failures before it, so those steps run again.
        for (let i = outcomes.length - 1; i >= 0; i--) {
          const { key, entry } = outcomes[i]!;
          if (entry.kind !== "step.failed") continue;
          outcomes.splice(i, 1);
          this.forgotten.add(key);
        }
        continue;
      }
      if (raw.opKey === null) continue;
      const entry: DecodedEntry = { seq: raw.seq, kind: raw.kind, data: decode(raw.payload) };
      this.append(raw.opKey, entry, true);
      if (raw.kind === "step.completed") observer.stepCompleted?.(raw.opKey, entry.data as EntryData["step.completed"]);
      if (!isOutcome(raw.kind, entry.data)) continue;
      const acquired = acquisitions.get(raw.opKey);
      if (acquired && (raw.kind === "step.completed" || raw.kind === "step.failed")) {
        acquired.entry = entry;
        continue;
      }
      const outcome = { key: raw.opKey, entry };
      if (raw.kind === "step.completed" && (entry.data as EntryData["step.completed"]).resource) acquisitions.set(raw.opKey, outcome);
      outcomes.push(outcome);
    }
    return outcomes;
  }

  /** Records an entry just written (so an op relaunched after a wait sees what it wrote). */
  noteWritten(entry: NewEntry & { opKey: string }, seq: number): void {
    this.append(entry.opKey, { seq, kind: entry.kind, data: entry.data }, false);
  }

  private append(key: string, entry: DecodedEntry, journaled: boolean): void {
    let list = this.history.get(key);
    if (!list) {
      this.history.set(key, (list = []));
      const slash = key.lastIndexOf("/");
      if (journaled && slash > 0) {
        const prefix = key.slice(0, slash + 1);
        const keys = this.byIteration.get(prefix);
        if (keys) keys.push(key);
        else this.byIteration.set(prefix, [key]);
      }
    }
    list.push(entry);
  }

  /** Everything the journal holds for an op key, oldest first. */
  entries(key: string): DecodedEntry[] {
    return this.history.get(key) ?? [];
  }

  /** The op's first entry (its intent, or its only entry). */
  first(key: string): DecodedEntry | undefined {
    return this.history.get(key)?.[0];
  }

  /** The op's latest entry. */
  last(key: string): DecodedEntry | undefined {
    return this.history.get(key)?.at(-1);
  }

  has(key: string): boolean {
    return this.history.has(key);
  }

  /** Every op key with journaled entries. */
  keys(): IterableIterator<string> {
    return this.history.keys();
  }

  /** Every op key with its entries. */
  [Symbol.iterator](): IterableIterator<[string, DecodedEntry[]]> {
    return this.history[Symbol.iterator]();
  }

  /** True when a `run.retried` forgot this step's terminal failure. */
  wasRetried(key: string): boolean {
    return this.forgotten.has(key);
  }

  /** The journaled op keys of one loop iteration, taken out of the index (each iteration is checked once). */
  takeIteration(prefix: string): string[] | undefined {
    const keys = this.byIteration.get(prefix);
    this.byIteration.delete(prefix);
    return keys;
  }

  /** Forgets an op (an ended loop iteration's), so a long loop holds no history. */
  forget(key: string): void {
    this.history.delete(key);
    this.forgotten.delete(key);
  }
}

/** The seq of each loop's newest checkpoint (snapshot or completion) among a resume's entries, by loop key. */
function loopCheckpoints(entries: readonly JournalEntry[]): Map<string, { from: number; seq: number }> {
  const seqs = new Map<string, { from: number; seq: number }>();
  for (const raw of entries) if (raw.opKey !== null && isCheckpoint(raw.kind)) seqs.set(raw.opKey, { from: supersededBy(raw).from, seq: raw.seq });
  return seqs;
}

/**
 * True for an entry of a loop iteration that a checkpoint of that loop (or of an enclosing one)
 * supersedes (in its range). Only kept entries of that kind reach a resume.
 */
function supersededIteration(key: string, seq: number, checkpoints: Map<string, { from: number; seq: number }>): boolean {
  const segments = key.split("/");
  for (let j = 0; j + 2 < segments.length; j += 2) {
    const checkpoint = checkpoints.get(segments.slice(0, j + 1).join("/"));
    if (checkpoint !== undefined && seq >= checkpoint.from && seq < checkpoint.seq) return true;
  }
  return false;
}
