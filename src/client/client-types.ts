import type { RunStatus } from "../core/run.js";

// The contract of `cairn/client`: the options and shapes {@link CairnClient} takes and gives
// (client.ts holds the implementation and re-exports these).

/** Options of {@link CairnClient}. */
export interface ClientOptions {
  /** The server, e.g. `http://127.0.0.1:4000`. */
  baseUrl: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** A fetch implementation. Default: the global fetch. */
  fetch?: typeof fetch;
}

/** Options of {@link CairnClient.entries} and {@link CairnClient.stream}. */
export interface StreamOptions {
  /** Start after this seq (default 0: from the first entry). */
  after?: number;
  /** Stops the stream; the iteration then ends without an error. */
  signal?: AbortSignal;
  /**
   * Entries over 8 KiB come with `data: null` and `elided` (their size), as on journal pages; fetch
   * one whole with {@link CairnClient.wholeValue}. For views that show many entries (the dashboard).
   */
  preview?: boolean;
  /** First delay before reconnecting after a dropped connection; doubles up to `maxReconnectDelayMs`. Default 250 ms. */
  reconnectDelayMs?: number;
  /** Default 5000 ms. */
  maxReconnectDelayMs?: number;
  /** Called before each reconnection, with the seq it resumes after and the reason. */
  onReconnect?: (info: { after: number; attempt: number; reason: unknown }) => void;
  /**
   * Called with live progress of a running step (`event: delta`), e.g. an agent's model output as
   * `{ opKey, attempt, data: { kind: "text", text } }` (also `kind: "thinking"`, and `"tool-input"`
   * with the call's `id` and `name`). On each (re)connection the server first sends what each running
   * attempt has produced so far, marked `catchUp: true`: replace what you have for that opKey,
   * attempt and kind, then append the live deltas that follow. A new `attempt` of an opKey starts
   * over. The step's journal entry, when it comes, is the source of truth.
   */
  onDelta?: (delta: StreamDelta) => void;
}

/** Live, non-journaled progress of a step, as the stream sends it (`event: delta`, no id). */
export interface StreamDelta {
  opKey: string;
  attempt: number;
  data: unknown;
  /** Set on the output so far of an attempt, sent first on each (re)connection: it replaces, not extends. */
  catchUp?: true;
}

/** How a stream ended. `status` is set when the run finished; absent when the stream was aborted. */
export interface StreamEnd {
  lastSeq: number;
  status?: RunStatus;
}

/** Filters and paging of {@link CairnClient.listHumanRequests} (see `GET /human-requests`). */
export interface HumanRequestsQuery {
  status?: "pending" | "answered" | "closed";
  runId?: string;
  runIdPrefix?: string;
  /** Default: oldest first for pending requests, newest first otherwise. */
  order?: "asc" | "desc";
  /** Default and at most 1000. */
  limit?: number;
  cursor?: string;
}

/** What a bulk action acts on: selected run ids, or every run a listing with these filters holds. */
export type BulkTarget =
  | { runIds: string[] }
  | {
      filter: {
        status?: RunStatus[];
        workflow?: string;
        q?: string;
        createdAfter?: number | string;
        createdBefore?: number | string;
        topLevel?: boolean;
        tags?: Record<string, string>;
      };
    };

/** The answer of a bulk action: runs acted on, and those refused with the reason. */
export interface BulkResult {
  done: string[];
  failed: { runId: string; error: string }[];
}

/** The filters of a runs listing (`GET /runs`, `GET /run-count`). */
export interface RunFilterQuery {
  status?: RunStatus | RunStatus[];
  workflow?: string;
  /** Text in the run id, workflow name, error message, input or a tag `key:value` (case-insensitive). */
  q?: string;
  createdAfter?: Date | number;
  createdBefore?: Date | number;
  /** Only top-level runs (child runs left out). */
  topLevel?: boolean;
  /** Only runs with every one of these tags. */
  tags?: Record<string, string>;
}
