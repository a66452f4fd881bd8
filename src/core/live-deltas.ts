/**
 * What each running step attempt has streamed so far (`step-progress` events), so a stream that
 * opens or reconnects mid-generation starts with the attempt's output so far, then gets the rest
 * live. Kept by the server (deltas of workers in its process and, through the store's
 * `LiveDeltaStore`, of other processes) and by a worker (for the first catch-up it publishes
 * when another process starts streaming a run). Ephemeral, like the deltas themselves: kept in
 * memory until the step's outcome (or the end of the run's execution), and bounded per step.
 */

/** Live progress of a step, as `event: delta` sends it; `catchUp` marks the output so far of an attempt, sent first to a new stream. */
export interface Delta {
  opKey: string;
  attempt: number;
  data: unknown;
  catchUp?: true;
}

/** Characters (or progress items) kept per step attempt; past it the attempt is not caught up (its live deltas still flow). */
export const MAX_LIVE_CHARS = 1_000_000;
const MAX_ITEMS = 2_000;

interface Attempt {
  attempt: number;
  items: Delta[];
  chars: number;
  overflow: boolean;
}

type TextPiece = { kind: string; text: string; id?: unknown; name?: unknown };

function textPiece(data: unknown): TextPiece | undefined {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return undefined;
  const d = data as Record<string, unknown>;
  return typeof d["kind"] === "string" && typeof d["text"] === "string" ? (d as TextPiece) : undefined;
}

/** The deltas of the running attempts of each run, coalesced: consecutive pieces of one kind (and tool call) become one. */
export class LiveDeltas {
  private readonly runs = new Map<string, Map<string, Attempt>>();

  /** Records a delta of `runId`; a delta of a newer attempt replaces what the older one streamed. */
  record(runId: string, delta: Delta): void {
    let steps = this.runs.get(runId);
    if (!steps) this.runs.set(runId, (steps = new Map()));
    let current = steps.get(delta.opKey);
    if (!current || current.attempt !== delta.attempt) steps.set(delta.opKey, (current = { attempt: delta.attempt, items: [], chars: 0, overflow: false }));
    if (current.overflow) return;
    const piece = textPiece(delta.data);
    const last = current.items.at(-1);
    const lastPiece = last ? textPiece(last.data) : undefined;
    current.chars += piece ? piece.text.length : 1;
    if (piece && lastPiece && lastPiece.kind === piece.kind && lastPiece.id === piece.id) {
      last!.data = { ...lastPiece, text: lastPiece.text + piece.text };
    } else {
      current.items.push({ opKey: delta.opKey, attempt: delta.attempt, data: piece ? { ...piece } : delta.data, catchUp: true });
    }
    if (current.chars > MAX_LIVE_CHARS || current.items.length > MAX_ITEMS) {
      current.overflow = true;
      current.items = [];
    }
  }

  /**
   * Replaces what a step's attempt streamed so far with `pieces` (the whole output so far, as
   * another process published it), then records them as {@link LiveDeltas.record} does.
   */
  replace(runId: string, opKey: string, attempt: number, pieces: readonly unknown[]): void {
    this.forgetStep(runId, opKey);
    for (const data of pieces) this.record(runId, { opKey, attempt, data });
  }

  /** The output so far of `runId`'s running attempts (of one step when `opKey` is given), each piece marked `catchUp`. */
  snapshot(runId: string, opKey?: string): Delta[] {
    const out: Delta[] = [];
    for (const [key, step] of this.runs.get(runId) ?? []) if (opKey === undefined || key === opKey) for (const item of step.items) out.push({ ...item });
    return out;
  }

  /** The attempt of `opKey` kept for `runId`, and whether it outgrew the bound (its output is then no longer kept). */
  attemptOf(runId: string, opKey: string): { attempt: number; overflow: boolean } | undefined {
    const step = this.runs.get(runId)?.get(opKey);
    return step && { attempt: step.attempt, overflow: step.overflow };
  }

  /** The op keys of `runId`'s steps kept here. */
  steps(runId: string): string[] {
    return [...(this.runs.get(runId)?.keys() ?? [])];
  }

  /** The runs with steps kept here. */
  runIds(): string[] {
    return [...this.runs.keys()];
  }

  /** Drops a step's attempt once its outcome is journaled. */
  forgetStep(runId: string, opKey: string): void {
    const steps = this.runs.get(runId);
    if (!steps) return;
    steps.delete(opKey);
    if (steps.size === 0) this.runs.delete(runId);
  }

  /** Drops a run's attempts once this process stops executing it. */
  forgetRun(runId: string): void {
    this.runs.delete(runId);
  }
}
