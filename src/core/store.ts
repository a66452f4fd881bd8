import type { QueueLimits, QueueStat, RunFlow } from "./flow-control.js";
import type { StepSlotGrant, StepSlotRequest } from "./step-flow.js";
import type { DrainedVersion, VersionCount } from "./deploys.js";
import type { EntryKind, HumanAnswer, JournalEntry, NewEntry } from "./journal.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "./outbox.js";
import type { RunRecord, RunStatus } from "./run.js";
import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "./schedule.js";

/**
 * The Store port: everything the engine needs from storage, and nothing more.
 * Implementations (memory, SQLite, PostgreSQL) pass one conformance suite
 * (`src/store/conformance`). All times are epoch milliseconds passed in by the
 * caller, so tests can drive the clock.
 *
 * Rules every implementation keeps:
 * - `commit` applies each {@link RunWrite} atomically and only if the run's
 *   `leaseEpoch` equals `write.epoch` and the run is not terminal (one writer per run).
 * - entries get `seq = lastSeq + 1, …` with no gaps; the run row is updated with
 *   {@link projectEntry} for every entry, in the same transaction.
 * - entry side tables are projections too: `event.received` marks its inbox row
 *   consumed, `child.started` creates the child run, `human.requested` /
 *   `human.answered` maintain the human-request table, terminal run entries wake the parent.
 */
export interface Store {
  /** A description of where the data lives, e.g. `sqlite:/abs/path.db`. */
  readonly url: string;
  /** Creates or upgrades the schema. Idempotent; safe to call from several processes. */
  migrate(): Promise<void>;
  /** Releases connections and file handles. */
  close(): Promise<void>;

  // ── runs ──
  /**
   * Creates a run with its `run.created` entry (seq 1), unless a run with that id exists:
   * then returns the existing row and `created: false` without writing anything.
   */
  createRun(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }>;
  /**
   * {@link Store.createRun} for several runs in one transaction, in order (a runId repeated in
   * `runs` is created once, then found). Results are in the order of `runs`. Any error
   * rolls back the whole batch.
   */
  createRuns(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]>;
  /**
   * Creates a run whose journal starts as a copy (time travel, `engine.fork`): its `run.created`
   * (seq 1, from `run`), then `entries` verbatim at seq 2, 3, … with their own kind, op key,
   * payload, epoch and time. Unless a run with that id exists: then returns the existing row and
   * `created: false` without writing anything.
   *
   * The copied entries are history, not new facts: they are not projected and have no side effects
   * (no inbox row is consumed, no child run or human request is created), except that
   * `step.completed` search text is indexed so `searchJournal` finds it in the new run too.
   * The row is `pending`, unclaimed, at `leaseEpoch` = the highest epoch among `entries`
   * (so later claims keep epochs increasing), `lastSeq = entries.length + 1`. `run.claimFor` is ignored.
   */
  createRunWithJournal(run: NewRun, entries: readonly CopiedEntry[], now: number): Promise<{ run: RunRecord; created: boolean }>;
  /**
   * Debounced start (flow control). If a run of `run.workflow` with debounce key `key` exists that was never
   * claimed (suspended at epoch 0, waiting for its start), appends `run.debounced { input, startAt }` to it,
   * replaces its input and moves its start (`wakeAt`) to `startAt`, and returns it with `created: false`.
   * Otherwise creates `run` (with its `flow`; `claimFor` is ignored) with `run.created` then `run.debounced`,
   * suspended until `startAt`, and returns it with `created: true`. Atomic: concurrent starts with one key
   * coalesce into one run; a run a worker already claimed is never changed.
   */
  debounceRun(run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  /**
   * How many runs there are of each (workflow, status) pair that has any; for gauges such as
   * `/metrics`, and (with `filter`, the filters of {@link listRuns}) for a listing's total. One
   * grouped query, no rows loaded.
   */
  countRuns(filter?: RunFilter): Promise<RunCount[]>;
  /**
   * Flow control: for each (queue, concurrency key) with unfinished runs, how many are running, waiting
   * (pending, or suspended and due at `now`) and suspended (not due). Ordered by queue, then key (nulls first).
   */
  queueStats(now: number): Promise<QueueStat[]>;
  /** Newest first (createdAt desc, runId desc), paginated by an opaque cursor. */
  listRuns(query: ListRunsQuery): Promise<RunPage>;
  /**
   * Journal entries of one kind belonging to runs created at or after `createdAfter`, each with its
   * run's workflow, parent and creation time; ordered by (run createdAt, runId, seq) and keyset-paged
   * by `after` (the last row of the previous page). For aggregates over a time range, such as model
   * spend on the dashboard's overview: served by the runs' createdAt index and the journal's key,
   * never a scan of the whole journal.
   */
  listRunEntries(query: RunEntriesQuery): Promise<RunEntry[]>;

  // ── journal ──
  /** Entries of one run in seq order, optionally after a seq and limited. */
  readJournal(runId: string, options?: { afterSeq?: number; limit?: number; previewBytes?: number }): Promise<JournalEntry[]>;
  /**
   * The entries a worker needs to resume a run, in seq order: all of them except those a loop
   * checkpoint supersedes (see `core/resume.ts`). Implemented with indexed reads only, so its cost
   * follows what it returns, not the length of the run's history.
   */
  readJournalForResume(runId: string): Promise<JournalEntry[]>;
  /**
   * Full-text search over the run's indexed step results (`step.completed` entries with `text`):
   * entries matching any of the query's words, most relevant first.
   */
  searchJournal(runId: string, query: string, limit: number): Promise<JournalTextHit[]>;
  /**
   * How many {@link Store.commit} transactions an engine may keep in flight at once on this store
   * (its pool of writer connections); absent means one, as for a single-writer store. An engine
   * never has two writes of one run in flight at once, whatever this is.
   */
  readonly commitWriters?: number;
  /**
   * Group commit: applies every write in one transaction where the backend allows.
   * A write whose epoch is stale, or whose run is terminal, is skipped and reported
   * `{ ok: false }`; the others still commit. Results are in the order of `writes`.
   */
  commit(writes: RunWrite[], now: number): Promise<CommitResult[]>;

  // ── leases ──
  /**
   * Claims up to `limit` runnable runs of the given workflow versions: pending runs,
   * suspended runs whose `wakeAt <= now`, and running runs whose lease expired.
   * Each claimed run gets `leaseEpoch + 1`, the lease, status `running`,
   * `wakePending = false` and a `run.claimed` entry. Oldest wake-up first.
   */
  claimRuns(request: ClaimRequest): Promise<RunRecord[]>;
  /** Extends the leases still held (matching epoch, not terminal); returns the runIds whose lease is lost. */
  renewLeases(request: RenewRequest): Promise<string[]>;
  /**
   * Operator action outside any lease (cancel, retry): if the run's status is in
   * `allowed`, bumps its epoch (fencing out the current holder), clears the lease,
   * appends `entry` and projects it. Returns the updated row, or the unchanged row and
   * `applied: false` when its status is not allowed. Throws RunNotFoundError for unknown runs.
   */
  controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }>;

  // ── inbox ──
  /**
   * Buffers an event in the run's inbox and wakes the run (suspended → `wakeAt = now`;
   * running/pending → `wakePending = true`). A duplicate `eventId` for the run is a no-op
   * (`duplicate: true`). Throws RunNotFoundError, or RunFinishedError for terminal runs.
   */
  sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean }>;
  /** Unconsumed inbox events of one type for a run, oldest first. */
  pendingEvents(runId: string, type: string, limit?: number): Promise<InboxEvent[]>;
  /** All inbox events of a run (for inspection), oldest first. */
  listInbox(runId: string): Promise<InboxEvent[]>;

  // ── human requests ──
  getHumanRequest(requestId: string): Promise<HumanRequest | undefined>;
  /** Requests matching `query`, in (createdAt, requestId) order (`query.order`, default oldest first). */
  listHumanRequests(query: ListHumanRequestsQuery): Promise<HumanRequest[]>;
  /**
   * Records an answer for a pending request and delivers it to the run's inbox as
   * event type `human:<requestId>` (eventId = requestId), waking the run.
   * Throws HumanRequestNotFoundError, or HumanRequestAnsweredError if it already has an answer.
   */
  answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void>;

  // ── outbox (messages written by `ctx.emit`, inserted by the commit of their `outbox.emitted` entry) ──
  /**
   * Claims up to `limit` pending messages of `request.topics` whose `nextAttemptAt <= now`, oldest due
   * first: each gets `attempts + 1`, `leaseOwner = owner` and `nextAttemptAt = now + leaseMs`, so no
   * other dispatcher claims it before that lease expires. Concurrent claimers never get the same message.
   */
  claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]>;
  /**
   * Records a delivery attempt's result (delivered; or failed, to retry at `retryAt` or dead) if the
   * message is still pending, held by `owner` at `attempts`. Returns false, changing nothing, otherwise.
   */
  settleOutbox(settlement: OutboxSettlement, now: number): Promise<boolean>;
  /** Messages in id order, filtered. */
  listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]>;
  getOutboxMessage(messageId: string): Promise<OutboxMessage | undefined>;
  /**
   * Re-queues a dead message: pending, `attempts = 0`, due at `now`, last error kept. Returns the row
   * and `applied: false`, unchanged, when it is not dead. Throws OutboxMessageNotFoundError for unknown ids.
   */
  retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }>;

  // ── workers and operations ──
  /** Records a live worker, or refreshes its heartbeat (upsert by workerId). */
  upsertWorker(worker: WorkerRecord): Promise<void>;
  /** Forgets a worker that stopped. */
  removeWorker(workerId: string): Promise<void>;
  /** Workers whose last heartbeat is after `since` (epoch ms), newest heartbeat first. */
  listWorkers(since: number): Promise<WorkerRecord[]>;
  /**
   * Non-terminal runs nobody will move: suspended with no due time and nothing to wait for,
   * or runnable (pending, suspended and due, running with an expired lease) for longer than
   * `graceMs` before `now` without being claimed. There should never be any.
   */
  listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]>;

  // ── safe deploys ──
  /** How many runs there are of each (workflow, version, status) that has any: one grouped query. */
  countVersions(): Promise<VersionCount[]>;
  /**
   * Marks a workflow version drained (no worker claims its runs) or undrains it. Idempotent; returns
   * true when something changed.
   */
  setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean>;
  /** Every drained version, by workflow then version. Workers read it on their heartbeat. */
  listDrainedVersions(): Promise<DrainedVersion[]>;

  // ── API tokens and the audit log ──
  /** Stores a new API token (only its hash). Throws if a token with this id exists. */
  createToken(token: TokenRecord): Promise<void>;
  /** Every token, revoked ones included, newest first (createdAt desc, id desc). */
  listTokens(): Promise<TokenRecord[]>;
  /**
   * The token with this id, revoked or not. Tokens are looked up by their public id and the caller
   * compares the secret's hash in constant time (looking up by hash would compare in the database).
   */
  getToken(id: string): Promise<TokenRecord | undefined>;
  /** Marks a token revoked at `now`. False when it does not exist or was already revoked (nothing changes). */
  revokeToken(id: string, now: number): Promise<boolean>;
  /** Appends one entry to the audit log; returns it with its id (increasing). */
  appendAudit(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Audit entries, newest first (id desc), optionally before an id and filtered. */
  listAudit(query: ListAuditQuery): Promise<AuditEntry[]>;

  // ── retention, export and import ──
  /**
   * Runs that {@link Store.deleteRuns} may delete, oldest finished first: status in `query.statuses`
   * (terminal ones only), `finishedAt < query.finishedBefore`, of `query.workflow` if given, and
   * neither a child whose parent is live nor a parent with a live child.
   */
  listPrunableRuns(query: PruneQuery): Promise<RunRecord[]>;
  /**
   * Deletes runs and every row that belongs to them (journal, inbox, human requests, full-text
   * index), in one transaction. Each run is deleted only if, at delete time, it is still terminal
   * with the `lastSeq` it was selected with (a run retried since then has a longer journal and
   * survives) and is still prunable (no live parent, no live child). Returns the deleted ids.
   */
  deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]>;
  /**
   * The rows of a run, for an export: the run, its journal, inbox and human requests.
   * Undefined when the run does not exist. One read transaction where the backend has them.
   */
  readRunRows(runId: string): Promise<RunImport | undefined>;
  /**
   * Inserts a run and its rows verbatim (journal seqs, statuses and times as given; inbox rows get
   * new ids; search text is indexed from `step.completed` entries), all or nothing. No projection,
   * no side effects. Throws RunConflictError when the run id, or one of its human request ids, exists.
   */
  importRun(data: RunImport): Promise<void>;
  // ── schedules (see docs/operations/schedules.md) ──
  /**
   * Creates a schedule (state: cursor at `now`, counts 0, not paused, no lease), or, when one with this
   * name exists with a different definition, replaces its definition, keeps its state and pause flag,
   * clears its lease and bumps its epoch. Returns the stored row.
   */
  saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord>;
  getSchedule(name: string): Promise<ScheduleRecord | undefined>;
  /** Every schedule, by name. */
  listSchedules(): Promise<ScheduleRecord[]>;
  /** Removes a schedule; false when there was none. Runs it started are kept. */
  deleteSchedule(name: string): Promise<boolean>;
  /**
   * Takes or renews the scheduler lease of a schedule that is not paused: succeeds when nobody holds it,
   * `owner` holds it, or the lease expired at `now`; the epoch is bumped when the owner changes.
   * Returns the claimed row, or undefined (held by another, paused, or unknown).
   */
  claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined>;
  /** Writes the scheduler's state, only if `owner` still holds the lease at `epoch`. False when fenced out. */
  updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean>;
  /**
   * Pauses or resumes a schedule: clears its lease and bumps its epoch (fencing out a scheduler mid-pass).
   * Resuming moves the cursor to `now` when it is behind, so ticks that fell due while paused are not fired.
   * Returns the updated row, or undefined for an unknown schedule.
   */
  setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined>;
  // ── blobs (content-addressed large payloads, see docs/operations/payloads.md) ──
  /** The blobs with these SHA-256 hashes that exist (any order; missing ones are left out). */
  readBlobs(hashes: readonly string[]): Promise<PayloadBlob[]>;
  /**
   * Deletes blobs that no journal entry, run (input, output) or inbox row references any more
   * and that were last written before `before` (epoch ms), so a blob a transaction is about to
   * reference is never taken. Returns how many were deleted. For `cairn prune` and maintenance.
   */
  deleteUnreferencedBlobs(before: number): Promise<number>;

  // ── flow control of steps (core/step-flow.ts) ──
  /**
   * Takes the slots of one step attempt, atomically for all its limits, or queues it. Concurrency slots
   * are held while the run is `running` at `request.epoch` with an unexpired lease, so a crashed holder's
   * slot frees when its lease expires; a rate limit counts starts in its window. Waiters are served first
   * come, first served (`decideSlots` in core/step-flow.ts); waiters whose run is finished are dropped. On a grant the
   * op's waiter rows go and the next waiter of each bucket is woken (it may fit too); on a refusal the op
   * is queued (once, keeping its place) and `retryAt` says when to look again.
   */
  acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant>;
  /** Gives back the op's concurrency slots in `buckets` and wakes the first waiter of each (a suspended run becomes due). */
  releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void>;
  // ── tags, published values, deadlines (docs/live-runs.md) ──
  /** The run's tags (`{}` when it has none or does not exist). One indexed read. */
  getRunTags(runId: string): Promise<Record<string, string>>;
  /**
   * The latest value a run stored under `name`: what `ctx.publish` published (`kind: "published"`), or
   * a `ctx.handle` handler's reply to request `name` (`kind: "reply"`). One indexed read, whatever the
   * number of publishes: each commit of a `publish.value` / `request.replied` entry replaces its row.
   */
  getRunValue(runId: string, kind: RunValueKind, name: string): Promise<RunValue | undefined>;
  /**
   * Deadlines that fell due at `now` (`dueAt <= now`) of runs that are not terminal, earliest first.
   * A deadline is a row written with its run (`NewRun.deadlineAt`), so it fires even if every worker
   * was down when it fell due.
   */
  listDueDeadlines(now: number, limit: number): Promise<RunDeadline[]>;
  /** Forgets a run's deadline (it fired, or the run ended). False when there was none. */
  clearDeadline(runId: string): Promise<boolean>;

  // ── optional capabilities ──
  /**
   * The store's own clock (epoch ms), when it has one — PostgreSQL's database clock. Engines then
   * schedule timers and leases by it, so skewed worker clocks cannot fire a timer early or steal a lease.
   * Stores with a clock ignore the `now` arguments of claims, leases and wake-ups and use their own.
   */
  now?(): Promise<number>;
  /**
   * Push wake-ups (PostgreSQL LISTEN/NOTIFY): `listener` is called when runs may have become runnable
   * anywhere (started, event sent, child finished, timer armed soon). Returns an unsubscribe function.
   */
  onWake?(listener: () => void): () => void;
  /**
   * Push notices of one run's journal growth written by any process (PostgreSQL LISTEN/NOTIFY; the
   * SQLite and memory stores have none): `listener` is called after a transaction that appended
   * entries of `runId` commits (and, rarely, when it may have: a notice naming too many runs, or
   * notices missed while reconnecting). Subscribing makes writers send notices for this run only,
   * so commits of runs no one subscribed to pay nothing. A notice is a hint to read the journal,
   * never its content: it may come late, twice, or (until writers learn of the subscription) not at
   * all, so readers keep a slower poll. Returns an unsubscribe function.
   * @example
   * const stop = store.onJournal?.("run-1", () => void readNewEntries("run-1"));
   */
  onJournal?(runId: string, listener: () => void): () => void;
}

/** What a run value row holds: a published value or a request's reply. */
export type RunValueKind = "published" | "reply";

/** A run's value as {@link Store.getRunValue} reads it. */
export interface RunValue {
  runId: string;
  kind: RunValueKind;
  name: string;
  /** The encoded value (for a reply: the encoded `{ reply }` or `{ error }` of its `request.replied` entry). */
  value: string;
  /** The seq of the entry that wrote it. */
  seq: number;
  /** When that entry was written (epoch ms). */
  at: number;
}

/** A run's deadline (see {@link Store.listDueDeadlines}). */
export interface RunDeadline {
  runId: string;
  dueAt: number;
}

/** The rows of one run, as {@link Store.readRunRows} reads them and {@link Store.importRun} inserts them. */
export interface RunImport {
  run: RunRecord;
  /** The whole journal, seq 1…lastSeq. */
  journal: JournalEntry[];
  /** Inbox rows in arrival order; an importing store gives them new ids. */
  inbox: Omit<InboxEvent, "id">[];
  humanRequests: HumanRequest[];
}

/** Filters of {@link Store.listPrunableRuns}. */
export interface PruneQuery {
  /** Only runs finished strictly before this time (epoch ms). */
  finishedBefore: number;
  /** Statuses to prune; non-terminal ones are ignored. */
  statuses: readonly RunStatus[];
  workflow?: string;
  /** At most this many runs. */
  limit: number;
}

/** A journal entry to copy into a new run by {@link Store.createRunWithJournal}: everything but its run and seq. */
export type CopiedEntry = Omit<JournalEntry, "runId" | "seq">;

/** Filters and paging of {@link Store.listRunEntries}. */
export interface RunEntriesQuery {
  kind: EntryKind;
  /** Only runs created at or after this time (ms since the epoch). */
  createdAfter: number;
  /** Continue after this row of a previous page. */
  after?: { createdAt: number; runId: string; seq: number };
  /** At most this many rows (1 to 1000). */
  limit: number;
}

/** A row of {@link Store.listRunEntries}: a journal entry and the run it belongs to. */
export interface RunEntry {
  entry: JournalEntry;
  workflow: string;
  parentRunId: string | null;
  /** The run's createdAt. */
  createdAt: number;
}

/** One group of {@link Store.countRuns}. */
export interface RunCount {
  workflow: string;
  status: RunStatus;
  count: number;
}

/** A worker, as the registry shows it. */
export interface WorkerRecord {
  workerId: string;
  host: string;
  pid: number;
  /** `name@version` of every workflow it runs. */
  workflows: string[];
  runsHeld: number;
  startedAt: number;
  heartbeatAt: number;
}

/** A run to create. */
export interface NewRun {
  runId: string;
  workflow: string;
  version: string;
  /** Encoded input. */
  input: string;
  parentRunId?: string | null;
  parentOpKey?: string | null;
  /** Blobs the run's payloads reference, inserted (deduplicated) with the run, only if it is created. */
  blobs?: readonly PayloadBlob[];
  /**
   * Create the run already claimed by this worker, as {@link Store.claimRuns} would claim it
   * (`run.claimed` follows `run.created` in the same transaction). Ignored when the run exists.
   */
  claimFor?: { workerId: string; leaseMs: number };
  /** The run's queue, concurrency key and priority (flow control); absent for a run without a queue. Not combined with `claimFor`. */
  flow?: RunFlow;
  /** Tags (validated by `core/tags.ts`), journaled in `run.created` and stored in an indexed table. */
  tags?: Record<string, string>;
  /** The run this one continues (`ctx.continueAsNew`), journaled in `run.created`. */
  continuedFrom?: string;
  /**
   * A delayed start (epoch ms): the run is created suspended until then, with a `run.suspended` entry at
   * seq 2, and no worker claims it earlier. Ignored with `claimFor`.
   */
  startAt?: number;
  /** A deadline (epoch ms): a row that {@link Store.listDueDeadlines} lists once due, inserted with the run. */
  deadlineAt?: number;
}

/** Filters for {@link Store.listRuns}. */
export interface ListRunsQuery {
  status?: RunStatus[];
  workflow?: string;
  /** Only children of this run; `null`: only top-level runs (those without a parent). */
  parentRunId?: string | null;
  /**
   * Only runs whose id starts with this text (case-sensitive, no wildcards: `%` and `_` are plain
   * characters). A namespaced API token lists runs with `runIdPrefix: "<namespace>/"`, filtered in
   * the query so a page is never short.
   */
  runIdPrefix?: string;
  /**
   * Only runs whose id, workflow name, error message, encoded input or a tag (written `key:value`)
   * contains this text, ignoring case (a plain substring: `%` and `_` are not wildcards). SQLite
   * folds the case of ASCII letters only; an input or error sealed by `withPayloads` encryption, or
   * offloaded, is not searched.
   */
  q?: string;
  createdAfter?: number;
  createdBefore?: number;
  /** Only runs that have every one of these tags (exact key and value), through the tag index. */
  tags?: Record<string, string>;
  /** Default 50, at most 1000. */
  limit?: number;
  /**
   * For listings: an offloaded payload larger than this is not loaded; it reads as an elided marker
   * (core/payloads.ts `elidedMarker`) with its size. Stores without offloading ignore it.
   */
  previewBytes?: number;
  /** From a previous page's `nextCursor`. */
  cursor?: string;
}

/** The filters of a {@link ListRunsQuery}, without paging: what {@link Store.countRuns} counts. */
export type RunFilter = Omit<ListRunsQuery, "limit" | "cursor" | "previewBytes">;

/** Filters of {@link Store.listHumanRequests}. */
export interface ListHumanRequestsQuery {
  status?: HumanRequestStatus;
  runId?: string;
  /**
   * Only requests of runs whose id starts with this text (plain characters, no wildcards). A
   * namespaced API token lists with `runIdPrefix: "<namespace>/"`, so a page is never short.
   */
  runIdPrefix?: string;
  /** Default and at most 1000. */
  limit?: number;
  /** `asc` (default): oldest first; `desc`: newest first. Ties are broken by requestId. */
  order?: "asc" | "desc";
  /** Keyset paging: only requests after this one in `order` (the last of the previous page). */
  after?: { createdAt: number; requestId: string };
}

/** A page of runs. */
export interface RunPage {
  runs: RunRecord[];
  /** Present when more runs match. */
  nextCursor?: string;
}

/** Appends for one run, fenced by the writer's lease epoch. */
export interface RunWrite {
  runId: string;
  epoch: number;
  entries: NewEntry[];
  /** Blobs the entries reference, inserted (deduplicated by hash) in the same transaction, only if the write is accepted. */
  blobs?: readonly PayloadBlob[];
}

/**
 * A content-addressed payload: `body` is stored under the SHA-256 (hex) of the payload text it
 * holds (after decoding by the payload codec, when one encrypted it). See docs/operations/payloads.md.
 */
export interface PayloadBlob {
  hash: string;
  /** UTF-8 byte length of the payload text. */
  size: number;
  /** The stored text: the payload itself, or its encrypted form. */
  body: string;
}

/** Outcome of one {@link RunWrite}. */
export type CommitResult = { ok: true; firstSeq: number; lastSeq: number } | { ok: false; reason: "lease-lost" | "finished" | "not-found" };

/** What a worker may claim. */
export interface ClaimRequest {
  workerId: string;
  now: number;
  leaseMs: number;
  limit: number;
  /** Only runs pinned to one of these (workflow, version) pairs are claimed. */
  workflows: { name: string; version: string }[];
  /**
   * Queues whose runs this claim may take, with their limits (flow control). Runs of other queues are
   * not claimed (except running ones whose lease expired, which keep their slot). A queued run is
   * claimed, after the unqueued ones, only while its queue has fewer than `concurrency` runs running,
   * its key fewer than `perKeyConcurrency`, and (for a first start) the rate limit allows; highest
   * priority first, then oldest wake-up. Absent or empty: no queued run is claimed and no extra work is done.
   */
  queues?: QueueLimits[];
  /**
   * Dead-letter limit: a run re-claimed after this many consecutive attempts without progress
   * (see `store/common/recovery.ts`) is moved to `dead` with a `run.dead` entry instead of being
   * claimed. Unset: never. Only runs whose lease expired or was given back are checked.
   */
  maxRecoveryAttempts?: number;
}

/** Leases to extend. */
export interface RenewRequest {
  workerId: string;
  leases: { runId: string; epoch: number }[];
  now: number;
  leaseMs: number;
}

/** An event to deliver. */
export interface NewInboxEvent {
  runId: string;
  type: string;
  eventId: string;
  /** Encoded payload. */
  payload: string;
  /** Blobs the payload references, inserted (deduplicated) with the event, only if it is not a duplicate. */
  blobs?: readonly PayloadBlob[];
}

/** An event in a run's inbox. */
export interface InboxEvent {
  id: number;
  runId: string;
  type: string;
  eventId: string;
  payload: string;
  /** Seq of the entry that consumed it, or null while buffered. */
  consumedSeq: number | null;
  receivedAt: number;
}

/** One hit of {@link Store.searchJournal}. */
export interface JournalTextHit {
  seq: number;
  opKey: string;
  text: string;
}

/** Where a human request stands. */
export type HumanRequestStatus = "pending" | "answered" | "closed";

/** A question for a person, durable until answered. */
export interface HumanRequest {
  requestId: string;
  runId: string;
  opKey: string;
  question: string;
  options: string[];
  /**
   * `pending` until answered (or escalated on timeout: `answered`, by "timeout"); `closed` when its
   * run reached a final status first (set in the same transaction as the run's final entry).
   */
  status: HumanRequestStatus;
  /** Encoded {@link HumanAnswer}. */
  answer: string | null;
  timeoutAt: number | null;
  createdAt: number;
  /** When it was answered, or closed. */
  answeredAt: number | null;
  /** With status `closed`: the final status of the run (`cancelled`, `failed`, `completed`, …). */
  closedReason?: string;
  /** Encoded context the question was asked with (`ctx.askHuman({ context })`); absent without one. */
  context?: string;
  /** Set by views (never stored) when a payload of this request cannot be decoded: why (docs/errors/PAYLOAD_UNREADABLE.md). */
  unreadable?: string;
}

/** What a token may do: `read` (GETs), `write` (start, events, cancel, retry, answer), `admin` (tokens, audit). */
export type TokenScope = "read" | "write" | "admin";

/** An API token as stored: never the secret itself, only its SHA-256. */
export interface TokenRecord {
  /** Public id, part of the token text (`cairn_<id>_<secret>`). */
  id: string;
  /** A label for people, and the actor recorded in the audit log. */
  name: string;
  /** Hex SHA-256 of the secret part. */
  hash: string;
  scopes: TokenScope[];
  /** When set, the token sees and acts only on runs whose id starts with `<namespace>/`. */
  namespace: string | null;
  createdAt: number;
  revokedAt: number | null;
}

/** An entry to append to the audit log. */
export interface NewAuditEntry {
  at: number;
  /** Who: a token's name (`token:<name>`), or `cli:<user>`. */
  actor: string;
  /** What, e.g. `run.start`, `run.cancel`, `token.create`. */
  action: string;
  /** On what: a run id, a request id, a token id. */
  target: string | null;
  /** Anything else worth keeping (plain JSON); never secrets. */
  detail: Record<string, unknown> | null;
}

/** An audit log entry. */
export interface AuditEntry extends NewAuditEntry {
  id: number;
}

/** Filters of {@link Store.listAudit}. */
export interface ListAuditQuery {
  /** Only entries with a smaller id (the previous page's last id). */
  beforeId?: number;
  actor?: string;
  action?: string;
  target?: string;
  /** Default 50, at most 1000. */
  limit?: number;
}
