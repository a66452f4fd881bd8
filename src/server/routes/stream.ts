import type { Context, Hono } from "hono";
import { streamSSE, type SSEStreamingApi } from "hono/streaming";
import { runIdParam, streamQuery } from "../../core/api-schemas.js";
import { isTerminal } from "../../core/run.js";
import type { Engine, JournalEntryView } from "../../engine/engine.js";
import type { LiveDeltaStore } from "../../core/live-delta-store.js";
import type { JournalStore } from "../../core/store.js";
import { PREVIEW_BYTES } from "../../core/payloads.js";
import { RequestError, toHttpError } from "../errors.js";
import { parse, queryOf, toJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";
import { requireVisible } from "../auth/principal.js";
import { LiveDeltas, type Delta } from "../../core/live-deltas.js";
import { serializeError } from "../../core/serialize.js";
import { RemoteDeltas } from "../remote-deltas.js";

const PAGE = 500;
/** How long the store's journal notices of a run stay subscribed after its last stream closes (so a client's reconnection does not churn). */
const JOURNAL_LINGER_MS = 10_000;

/**
 * `GET /runs/:id/stream`: the run's journal as Server-Sent Events, read from the store, so a
 * reconnect (here or on another server process) resumes exactly after the client's last seq.
 *
 * Each entry is `event: entry`, `id: <seq>`, `data: <entry JSON>`. Live progress of a step (an
 * agent's model output, word by word), run by a worker of this process or of another one sharing
 * the store (through `LiveDeltaStore`, see `remote-deltas.ts`), is `event: delta` with data
 * `{ opKey, attempt, data }` and **no id**: it is ephemeral and is superseded by the step's journaled
 * outcome, which is the source of truth. A stream that opens (or reconnects) while a step attempt is
 * streaming first gets that attempt's output so far, coalesced, marked `catchUp: true` (replace, do
 * not append), then the rest live. A new attempt (after a retry or a crash, announced by its
 * `step.reconciled` / `step.started` entries) streams under its own `attempt` number. When the run is terminal and its
 * last entry was sent, `event: end` (data `{ status, lastSeq }`) closes the stream. New entries are
 * found at once when this process's workers commit them (the engine's `committed` events) or, on a
 * store with journal notices (PostgreSQL, `Store.onJournal`), when another process commits them; and
 * by polling the journal every `streamPollMs` as a safety net (the journal is the source of truth,
 * so reading it cannot skip or repeat an entry, however it was woken).
 */
/** `store`: the journal notices and live deltas of other processes, which wake the streams. */
export function registerStreamRoute(app: Hono, engine: Engine, options: ResolvedServerOptions, store: StreamStore): void {
  const wakers = new StreamWakers(engine, store, options.closing.signal, (error) =>
    options.logger.log("warn", "live deltas of other processes could not be read; retrying", { error: serializeError(error) }),
  );
  app.get("/runs/:id/stream", async (c) => {
    const { id } = parse(runIdParam, c.req.param(), "path");
    requireVisible(c, id);
    const query = parse(streamQuery, queryOf(c), "query");
    const after = lastEventId(c) ?? query.after ?? 0;
    await engine.getRun(id); // 404 as JSON before the stream opens
    return streamSSE(c, (stream) => follow(stream, engine, id, after, options, wakers, query.preview === "true"));
  });
}

/** The `Last-Event-ID` header as a seq, when present (it wins over `?after`: it is the newer of the two). */
function lastEventId(c: Context): number | undefined {
  const header = c.req.header("last-event-id");
  if (header === undefined || header.trim() === "") return undefined;
  // Checked as `?after` is: a whole number no larger than 2^53 - 1 (a larger one would be rounded).
  const seq = /^\d{1,16}$/.test(header.trim()) ? Number(header.trim()) : Number.NaN;
  if (!Number.isSafeInteger(seq))
    throw new RequestError(
      "INVALID_INPUT",
      `Invalid Last-Event-ID ${JSON.stringify(header.slice(0, 40))}: it must be a journal seq (a whole number from 0 to ${Number.MAX_SAFE_INTEGER}).`,
      400,
    );
  return seq;
}

/** What the streams read from the store beside the engine: other processes' journal notices and live deltas. */
export type StreamStore = LiveDeltaStore & Pick<JournalStore, "onJournal">;

/**
 * Wakes the streams of a run when its entries are committed: by this process's workers (the
 * engine's `committed` events) or, when the store has journal notices (`Store.onJournal`), by any
 * process; polling stays the safety net. One engine observer for all streams, added with the first
 * and removed when the server closes. The store's notices are subscribed per run while the run has
 * streams open (and {@link JOURNAL_LINGER_MS} after its last closes, so a client's reconnection does
 * not churn), since a subscription makes writers send notices with that run's commits.
 */
class StreamWakers {
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly progress = new Map<string, Set<(delta: Delta) => void>>();
  /** What running step attempts here streamed so far, for streams that open mid-generation. */
  private readonly live = new LiveDeltas();
  /** Deltas of runs streamed here that workers of other processes generate (followed with the journal notices, lingering alike). */
  private readonly remote: RemoteDeltas;
  private unsubscribe: (() => void) | undefined;
  /** The store's journal notices subscribed, by run; `linger` is set once the run's last stream closed. */
  private readonly journal = new Map<string, { stop: () => void; linger?: NodeJS.Timeout }>();
  private stopped = false;

  constructor(
    private readonly engine: Engine,
    private readonly store: StreamStore,
    closing: AbortSignal,
    onError: (error: unknown) => void,
  ) {
    this.remote = new RemoteDeltas(store, engine.instanceId, (runId, delta) => this.progressOf(runId, delta), onError);
    closing.addEventListener("abort", () => this.stop(), { once: true });
    this.subscribe(); // from the start: a stream that opens mid-generation gets the output so far
  }

  /** Calls `wake` at every commit of `runId`'s entries (here, or announced by the store) until the returned function is called. */
  onCommit(runId: string, wake: () => void): () => void {
    this.subscribe();
    let wakes = this.waiting.get(runId);
    if (!wakes) this.waiting.set(runId, (wakes = new Set()));
    wakes.add(wake);
    this.listenJournal(runId);
    return () => {
      const set = this.waiting.get(runId);
      if (!set?.delete(wake) || set.size > 0) return;
      this.waiting.delete(runId);
      this.lingerJournal(runId);
    };
  }

  /**
   * Calls `listener` with every step-progress of `runId` here until the returned function is called,
   * after the output so far of its running attempts (as `catchUp` deltas): together, nothing missed
   * and nothing twice (both happen in one synchronous turn).
   */
  onProgress(runId: string, listener: (delta: Delta) => void): () => void {
    this.subscribe();
    for (const delta of [...this.live.snapshot(runId), ...this.remote.live.snapshot(runId)]) listener(delta);
    let listeners = this.progress.get(runId);
    if (!listeners) this.progress.set(runId, (listeners = new Set()));
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.progress.get(runId) === listeners) this.progress.delete(runId);
    };
  }

  private subscribe(): void {
    this.unsubscribe ??= this.engine.observe((event) => {
      if (event.type === "step-progress") {
        const delta = { opKey: event.opKey, attempt: event.attempt, data: event.data };
        this.live.record(event.runId, delta);
        this.progressOf(event.runId, delta);
        return;
      }
      if (event.type === "step") this.live.forgetStep(event.runId, event.opKey);
      else if (event.type === "execution-ended" || event.type === "lease-lost") this.live.forgetRun(event.runId);
      if (event.type === "committed") this.wake(event.runId);
      // The engine closes its store next: stop reading it (streams still open end on their next read).
      if (event.type === "engine-closing") this.stop();
    });
  }

  /** Hands a delta of `runId` to its streams. */
  private progressOf(runId: string, delta: Delta): void {
    for (const listener of this.progress.get(runId) ?? []) listener(delta);
  }

  /** Subscribes to the store's journal notices and other processes' deltas of `runId` (or keeps a lingering subscription). */
  private listenJournal(runId: string): void {
    const current = this.journal.get(runId);
    if (current) {
      clearTimeout(current.linger);
      current.linger = undefined;
      return;
    }
    const store = this.store;
    if (this.stopped) return;
    this.remote.follow(runId);
    const stopJournal = store.onJournal ? store.onJournal(runId, () => this.wake(runId)) : undefined;
    this.journal.set(runId, {
      stop: () => {
        stopJournal?.();
        this.remote.unfollow(runId);
      },
    });
  }

  /** Ends the store's journal notices of `runId` after {@link JOURNAL_LINGER_MS}, unless a stream of it opens meanwhile. */
  private lingerJournal(runId: string): void {
    const current = this.journal.get(runId);
    if (!current) return;
    current.linger = setTimeout(() => {
      if (this.journal.get(runId) !== current) return;
      this.journal.delete(runId);
      current.stop();
    }, JOURNAL_LINGER_MS);
    current.linger.unref();
  }

  /** Wakes the streams of this run. */
  private wake(runId: string): void {
    for (const fn of [...(this.waiting.get(runId) ?? [])]) fn();
  }

  private stop(): void {
    this.stopped = true;
    this.remote.stop();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const { stop, linger } of this.journal.values()) {
      clearTimeout(linger);
      stop();
    }
    this.journal.clear();
  }
}

/** One entry, whole; a stream sends it whole after a preview read said it is large. */
async function wholeEntry(engine: Engine, runId: string, seq: number): Promise<JournalEntryView> {
  const [entry] = await engine.journal(runId, { afterSeq: seq - 1, limit: 1 });
  if (!entry || entry.seq !== seq) throw new Error(`Journal entry ${seq} of run ${runId} disappeared while it was streamed.`);
  return entry;
}

async function follow(
  stream: SSEStreamingApi,
  engine: Engine,
  runId: string,
  after: number,
  options: ResolvedServerOptions,
  wakers: StreamWakers,
  preview: boolean,
): Promise<void> {
  let lastSeq = after;
  let wake: (() => void) | undefined;
  let aborted = false;
  stream.onAbort(() => {
    aborted = true;
    wake?.();
  });
  const stopOnClose = options.closing.signal;
  const onClose = () => stream.abort();
  stopOnClose.addEventListener("abort", onClose, { once: true });
  let lastWrite = Date.now();
  // Live progress (a model's partial text) of steps this process runs: sent without an id, so
  // Last-Event-ID keeps naming journal seqs; dropped once the step's outcome was sent.
  let deltas: Delta[] = [];
  const finished = new Set<string>();
  const stopDeltas = wakers.onProgress(runId, (delta) => {
    deltas.push(delta);
    wake?.();
  });
  // Subscribed for the stream's life, not per wait: a commit announced while the journal is being
  // read marks the stream dirty, so it reads again instead of waiting for the poll.
  let dirty = false;
  const stopCommits = wakers.onCommit(runId, () => {
    dirty = true;
    wake?.();
  });
  try {
    await stream.write(`retry: ${options.streamRetryMs}\n\n`);
    while (!aborted) {
      dirty = false;
      // The run row first: every entry up to run.entries is then in the journal read that follows.
      if (deltas.length > 0) {
        const batch = deltas;
        deltas = [];
        for (const delta of await engine.redact(runId, batch)) {
          if (aborted) return;
          if (!finished.has(delta.opKey)) await stream.writeSSE({ event: "delta", data: toJson(delta) });
        }
        lastWrite = Date.now();
      }
      const run = await engine.getRun(runId);
      let sent = 0;
      for (;;) {
        // Read as previews, so a page of large entries is not all in memory at once: an entry over
        // PREVIEW_BYTES is then read whole on its own just before it is sent (or sent elided, when
        // the client asked for previews).
        const entries = await engine.journal(runId, { afterSeq: lastSeq, limit: PAGE, previewBytes: PREVIEW_BYTES });
        for (const previewed of entries) {
          if (aborted) return;
          const entry = previewed.elided === undefined || preview ? previewed : await wholeEntry(engine, runId, previewed.seq);
          await stream.writeSSE({ event: "entry", id: String(entry.seq), data: toJson(entry) });
          lastSeq = entry.seq;
          if (entry.opKey !== null && (entry.kind === "step.completed" || (entry.kind === "step.failed" && (entry.data as { final?: boolean } | null)?.final)))
            finished.add(entry.opKey);
          sent++;
        }
        if (entries.length < PAGE) break;
      }
      if (sent > 0) lastWrite = Date.now();
      if (isTerminal(run.status) && lastSeq >= run.entries) {
        await stream.writeSSE({ event: "end", data: toJson({ status: run.status, lastSeq }) });
        return;
      }
      if (deltas.length > 0 || dirty) continue; // arrived while reading or writing: send them before waiting
      if (Date.now() - lastWrite >= options.keepAliveMs) {
        await stream.write(": keep-alive\n\n");
        lastWrite = Date.now();
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, options.streamPollMs);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    }
  } catch (error) {
    if (aborted) return;
    const { code, message, unexpected } = toHttpError(error);
    if (unexpected) options.logger.log("error", "stream failed", { runId, error: String((error as Error)?.stack ?? error) });
    // No id: the client's Last-Event-ID stays at the last entry it got, and it reconnects from there.
    await stream.writeSSE({ event: "error", data: toJson({ error: { code, message } }) });
  } finally {
    stopDeltas();
    stopCommits();
    stopOnClose.removeEventListener("abort", onClose);
  }
}
