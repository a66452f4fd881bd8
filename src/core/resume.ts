import type { JournalEntry } from "./journal.js";

/**
 * Entry kinds that let a resume skip history: a loop's snapshot (the iterations before it) and a
 * loop's completion (all of its iterations). Stores index them (`journal_checkpoint_idx`).
 */
export const CHECKPOINT_KINDS = ["loop.snapshot", "loop.completed"] as const;

/** What a checkpoint entry supersedes: entries with `from <= seq < checkpoint.seq`, except `keep`. */
export interface Supersedes {
  /** First superseded seq (the entry after the loop's `loop.started`). */
  from: number;
  /** Seqs in the range that belong to other ops (written concurrently with the loop) and stay. */
  keep: number[];
}

/** True for the kinds listed in {@link CHECKPOINT_KINDS}. */
export function isCheckpoint(kind: string): boolean {
  return kind === "loop.snapshot" || kind === "loop.completed";
}

/**
 * Reads `from` and `keep` out of a checkpoint entry's payload. Stores call it on the payload as
 * stored: for an offloaded or encrypted checkpoint that is a marker, which carries the two fields
 * beside its reference (`withSupersedes` in core/payloads.ts). A payload without them (a marker
 * written before markers carried them) supersedes nothing: the read returns more than it needs and
 * {@link resumeView} drops the rest.
 */
export function supersededBy(entry: Pick<JournalEntry, "kind" | "payload" | "seq">): Supersedes {
  const data = JSON.parse(entry.payload) as Partial<Supersedes>;
  const from = typeof data.from === "number" ? data.from : entry.seq;
  const keep = Array.isArray(data.keep) ? data.keep.filter((seq): seq is number => typeof seq === "number") : [];
  return { from, keep };
}

/** The three indexed reads a store provides so {@link readForResume} never scans superseded history. */
export interface ResumeReads {
  /** The newest checkpoint entry with `seq < below`, or undefined. */
  latestCheckpointBelow(below: number): Promise<JournalEntry | undefined>;
  /** Entries with `from <= seq < below`, in seq order. */
  range(from: number, below: number): Promise<JournalEntry[]>;
  /** The entries with these seqs (ascending), in seq order. */
  seqs(seqs: number[]): Promise<JournalEntry[]>;
}

/**
 * The entries a worker needs to resume a run: every entry except those superseded by a
 * checkpoint. Walks down from the newest checkpoint: it reads the entries from that checkpoint
 * on, the ones it keeps, then continues below the range it supersedes. The cost is one indexed
 * read per checkpoint reached (at most one per loop on the path) plus the entries returned,
 * whatever the length of the superseded history.
 */
export async function readForResume(reads: ResumeReads): Promise<JournalEntry[]> {
  const parts: JournalEntry[][] = [];
  let below = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const checkpoint = await reads.latestCheckpointBelow(below);
    if (!checkpoint) {
      parts.push(await reads.range(1, below));
      break;
    }
    const { from, keep } = supersededBy(checkpoint);
    parts.push(await reads.range(checkpoint.seq, below));
    const kept = keep.filter((seq) => seq >= from && seq < checkpoint.seq).sort((a, b) => a - b);
    if (kept.length > 0) parts.push(await reads.seqs(kept));
    // A checkpoint that supersedes nothing still ends the walk below itself.
    below = Math.min(from, checkpoint.seq);
  }
  return parts.reverse().flat();
}

/**
 * The entries a resume needs out of entries already in memory: {@link readForResume} over an array.
 * The engine applies it to what the store returned, so replay is exact even when the store's read
 * skipped less than it could (a checkpoint whose stored form did not name what it supersedes); on
 * entries the store already narrowed it returns them unchanged. `entries` must have resolved
 * (plain) payloads.
 */
export async function resumeView(entries: readonly JournalEntry[]): Promise<JournalEntry[]> {
  let sorted = entries;
  for (let i = 1; i < entries.length; i++) {
    if (entries[i]!.seq <= entries[i - 1]!.seq) {
      sorted = [...entries].sort((a, b) => a.seq - b.seq);
      break;
    }
  }
  if (!sorted.some((entry) => isCheckpoint(entry.kind))) return [...sorted];
  return readForResume({
    latestCheckpointBelow: async (below) => sorted.findLast((entry) => entry.seq < below && isCheckpoint(entry.kind)),
    range: async (from, below) => sorted.filter((entry) => entry.seq >= from && entry.seq < below),
    seqs: async (seqs) => {
      const wanted = new Set(seqs);
      return sorted.filter((entry) => wanted.has(entry.seq));
    },
  });
}
