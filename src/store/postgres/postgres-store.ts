import { acquireStepSlots as acquireSlots, releaseStepSlots as releaseSlots } from "./postgres-step-flow.js";
import type { StepSlotGrant, StepSlotRequest } from "../../core/step-flow.js";
import type { QueueStat } from "../../core/flow-control.js";
import pg from "pg";
import { RUN_ENTRIES_SQL, runEntriesParams, toRunEntries } from "./postgres-run-entries.js";
import type { RunEntriesQuery, RunEntry, RunFilter } from "../../core/store.js";
import { HumanRequestAnsweredError, HumanRequestClosedError, HumanRequestNotFoundError, RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import type { HumanAnswer, JournalEntry, NewEntry } from "../../core/journal.js";
import { isTerminal, type RunRecord, type RunStatus } from "../../core/run.js";
import { readForResume } from "../../core/resume.js";
import { encode } from "../../core/serialize.js";
import type {
  ClaimRequest,
  CommitResult,
  HumanRequest,
  ListHumanRequestsQuery,
  InboxEvent,
  ListRunsQuery,
  CopiedEntry,
  RunCount,
  NewInboxEvent,
  NewRun,
  PayloadBlob,
  RenewRequest,
  RunPage,
  RunWrite,
  Store,
  WorkerRecord,
  JournalTextHit,
  AuditEntry,
  ListAuditQuery,
  NewAuditEntry,
  TokenRecord,
  PruneQuery,
  RunImport,
  RunDeadline,
  RunValue,
  RunValueKind,
} from "../../core/store.js";
import type { ScheduleDefinitionRecord, ScheduleRecord, ScheduleState } from "../../core/schedule.js";
import * as schedules from "../common/schedule-rows.js";
import { OutboxMessageNotFoundError } from "../../core/errors.js";
import type { ListOutboxQuery, OutboxClaimRequest, OutboxMessage, OutboxSettlement } from "../../core/outbox.js";
import { AUDIT_COLUMNS, TOKEN_COLUMNS, auditQuery, toAudit, toToken, tokenParams, type AuditRow, type TokenRow } from "../common/security-rows.js";
import { decodeCursor, encodeCursor, pageLimit } from "../common/list-query.js";
import { queryTerms } from "../common/search-terms.js";
import { isPlainAppend } from "../common/plan-write.js";
import { claimRun, fenceOut, fenceReason } from "../common/run-state.js";
import { debounceRun, pickQueuedRuns, queueStats } from "./postgres-flow.js";
import {
  channelName,
  journalChannel,
  liveChannel,
  resolvePostgresConfig,
  wakeChannel,
  type PostgresConfig,
  type PostgresStoreOptions,
} from "./postgres-config.js";
import { JournalNotices } from "./postgres-journal.js";
import { applyPostgresMigrations, latestPostgresVersion, postgresSchemaVersion } from "./postgres-migrations.js";
import { checkDurability, clientConfig, createPool, readDurability } from "./postgres-open.js";
import { deleteRunRows, importRows, listPrunable, readRows } from "./postgres-retention.js";
import {
  ANSWER_HUMAN,
  APPEND_PLAIN,
  APPEND_PLAIN_FN,
  NOT_HELD,
  COUNT_RUNS,
  CLAIM_CANDIDATES,
  DB_NOW,
  FIND_INBOX,
  GET_HUMAN,
  GET_RUN,
  GET_RUNS,
  INSERT_ENTRIES,
  INSERT_INBOX,
  LIST_INBOX,
  LIST_WORKERS,
  LOCK_HUMAN,
  PENDING_EVENTS,
  READ_JOURNAL,
  LATEST_CHECKPOINT,
  CLOSE_HUMANS,
  READ_JOURNAL_RANGE,
  READ_JOURNAL_SEQS,
  SEARCH_TEXT,
  REMOVE_WORKER,
  RENEW_LEASES,
  STUCK_RUNS,
  UPDATE_STATES,
  UPDATE_STATES_RETURNING,
  UPSERT_WORKER,
  listHumanQuery,
  countRunsQuery,
  listRunsQuery,
  type Sql,
} from "./postgres-queries.js";
import {
  entryArrays,
  stateArrays,
  toEntry,
  toHuman,
  toRun,
  toState,
  toWorker,
  type EntryRow,
  type HumanRow,
  type InboxRow,
  type StateRow,
  type WorkerRow,
} from "./postgres-rows.js";
import { CLAIM_OUTBOX, GET_OUTBOX, RETRY_OUTBOX, claimOutboxParams, listOutboxQuery, settleOutboxParams } from "./postgres-outbox.js";
import { PgRunner, type Tx } from "./postgres-tx.js";
import { recoveryVerdict } from "../common/recovery.js";
import type { RunState } from "../common/run-state.js";
import type { DrainedVersion, VersionCount } from "../../core/deploys.js";
import {
  COUNT_VERSIONS,
  DRAIN_VERSION,
  GET_RECOVERY_FAILURES,
  LATEST_ATTEMPT,
  LIST_DRAINED,
  SET_RECOVERY_FAILURES,
  UNDRAIN_VERSION,
} from "./postgres-deploys.js";
import { WakeListener } from "./postgres-wake.js";
import { WriteSession } from "./postgres-write.js";
import { LIST_TOOL_CALLS, READ_AGENT_MESSAGES } from "./postgres-agent-rows.js";
import { messageBounds } from "../common/agent-rows.js";
import type { AgentMessageRow, ToolCallRow } from "../../core/store/agent-rows.js";
import { CLEAR_DEADLINE, DUE_DEADLINES, GET_TAGS, GET_VALUE, tagsOf } from "./postgres-live.js";
import {
  ADVERTISE_LIVE,
  PRUNE_LIVE,
  PRUNE_LIVE_LISTENERS,
  READ_LIVE,
  RETIRE_LIVE,
  STREAMED_RUNS,
  WRITE_LIVE,
  liveRecords,
  writeLiveParams,
} from "./postgres-live-deltas.js";
import type { LiveDeltaRecord, NewLiveDelta } from "../../core/live-delta-store.js";
import type { LiveDeltaRow } from "../common/live-delta-sql.js";
import { DELETE_UNREFERENCED_BLOBS, READ_BLOBS, insertBlobs } from "./postgres-blobs.js";
import { acceptedBlobs } from "../common/blob-rows.js";

export type { PostgresStoreOptions } from "./postgres-config.js";

/** Most commit transactions an engine keeps in flight on one PostgreSQL store (see {@link PostgresStore.commitWriters}). */
export const MAX_COMMIT_WRITERS = 4;

/** What a {@link PostgresStore} runs on, for diagnostics (`cairn migrate`, health checks). */
export interface PostgresSettings {
  schema: string;
  /** The schema's version, 0 before migrate(). */
  schemaVersion: number;
  clock: "database" | "caller";
  /** `SHOW fsync` and `SHOW synchronous_commit` as this store's connections see them. */
  fsync: string;
  synchronousCommit: string;
  allowWeakDurability: boolean;
  /** `SHOW server_version`. */
  serverVersion: string;
}

/**
 * The {@link Store} for many workers on many hosts, on PostgreSQL through a `pg` pool. All tables
 * live in one schema (`?schema=`, default `cairn`). Claims lock candidates with
 * `FOR UPDATE SKIP LOCKED`, so concurrent claimers never wait for or double-claim a run; every
 * commit locks its runs, fences them by epoch and writes the whole batch in one transaction.
 * By default leases and timers run on the database clock ({@link PostgresStore.now}), and
 * {@link PostgresStore.onWake} pushes wake-ups with LISTEN/NOTIFY.
 *
 * Opening ({@link PostgresStore.migrate}, which `openStore` calls) refuses a server configured to
 * lose acknowledged commits (`fsync=off`, `synchronous_commit=off`) unless `allowWeakDurability`.
 * Connection failures reject the operation that met them and never crash the process; the pool
 * reconnects on the next operation.
 *
 * @example
 * const store = new PostgresStore("postgres://cairn@db.internal/cairn?schema=prod");
 * await store.migrate();
 */
export class PostgresStore implements Store {
  /** The URL without password, with its schema, e.g. `postgres://cairn@db/cairn?schema=cairn`. */
  readonly url: string;
  /**
   * The database clock, epoch ms (database-clock mode only; absent with `clock: "caller"`).
   * See {@link Store.now}.
   */
  readonly now?: () => Promise<number>;
  /**
   * See {@link Store.commitWriters}: half the pool, at most {@link MAX_COMMIT_WRITERS} (4 with the
   * default pool of 10), leaving connections for claims, lease renewals and reads.
   */
  readonly commitWriters: number;
  private readonly config: PostgresConfig;
  private readonly pool: pg.Pool;
  private readonly runner: PgRunner;
  private readonly wakes: WakeListener;
  private readonly journalNotices: JournalNotices;
  /** The live channel's listener (its own connection, opened on the first {@link PostgresStore.onLiveDeltas}). */
  private readonly liveNotices: WakeListener;
  private ready: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /**
   * Creates the pool (connections open on first use). Call {@link PostgresStore.migrate} before use.
   * @throws StoreUrlError / ValidationError for a URL or option it cannot use.
   */
  constructor(url: string, options: PostgresStoreOptions = {}) {
    this.config = resolvePostgresConfig(url, options);
    this.url = this.config.displayUrl;
    const onError = options.onConnectionError ?? (() => undefined);
    this.pool = createPool(this.config, onError);
    this.commitWriters = Math.max(1, Math.min(MAX_COMMIT_WRITERS, Math.floor(this.config.poolSize / 2)));
    const channel = wakeChannel(this.config.schema);
    const journal = journalChannel(this.config.schema);
    this.runner = new PgRunner(this.pool, this.config.clock, channel, { channel: journal, listened: (runIds) => this.journalNotices.listened(runIds) });
    this.wakes = new WakeListener(clientConfig(this.config), channel, onError);
    this.journalNotices = new JournalNotices(
      (statement, values) => this.runner.query(statement, values),
      new WakeListener(clientConfig(this.config), journal, onError, "cairn:journal"),
      this.wakes,
      channelName(channel),
      onError,
    );
    this.liveNotices = new WakeListener(clientConfig(this.config), liveChannel(this.config.schema), onError, "cairn:live");
    if (this.config.clock === "database") this.now = async () => this.dbNow();
  }

  /** The schema that holds the tables. */
  get schema(): string {
    return this.config.schema;
  }

  /**
   * Checks the server's durability settings, then creates or upgrades the schema (see
   * {@link Store.migrate}). Safe to call from many processes at once.
   * @throws StoreInvalidError for a server with weak durability or a schema that is not Cairn's.
   * @throws SchemaTooNewError when the schema was written by a newer Cairn.
   */
  async migrate(): Promise<void> {
    await this.runner.withClient(async (client) => {
      checkDurability(await readDurability(client), this.url, this.config.allowWeakDurability);
      await applyPostgresMigrations(client, this.config.schema, this.url);
    });
    this.ready = Promise.resolve();
  }

  /** The server and schema this store uses, e.g. to confirm durability settings and the schema version. */
  async settings(): Promise<PostgresSettings> {
    return this.runner.withClient(async (client) => {
      const durability = await readDurability(client);
      const { rows } = await client.query<{ version: string }>("SELECT current_setting('server_version') AS version");
      return {
        schema: this.config.schema,
        schemaVersion: await postgresSchemaVersion(client, this.config.schema),
        clock: this.config.clock,
        ...durability,
        allowWeakDurability: this.config.allowWeakDurability,
        serverVersion: rows[0]?.version ?? "unknown",
      };
    });
  }

  /** Ends the LISTEN connection and the pool. Idempotent. */
  async close(): Promise<void> {
    this.closing ??= (async () => {
      await this.journalNotices.close();
      await this.liveNotices.close();
      await this.wakes.close();
      await this.pool.end();
    })();
    await this.closing;
  }

  /** See {@link Store.onWake}: called after runs became runnable anywhere (or may have, after a reconnection). */
  onWake(listener: () => void): () => void {
    return this.wakes.subscribe(listener);
  }

  /**
   * See {@link Store.onJournal}. While it has subscribers this store LISTENs on the schema's journal
   * channel and advertises their runs in `journal_listeners`; writers (any process) send a journal
   * NOTIFY with a commit that appends entries only when some of its runs are advertised, naming
   * those, learning of a newly advertised run at once through the wake channel (or within seconds).
   */
  onJournal(runId: string, listener: () => void): () => void {
    return this.journalNotices.subscribe(runId, listener);
  }

  /** See {@link Store.advertiseLiveDeltas}. */
  async advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    if (runIds.length > 0) await this.query(ADVERTISE_LIVE, [origin, runIds, expiresAt]);
  }

  /** See {@link Store.retireLiveDeltas}. */
  async retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    await this.query(RETIRE_LIVE, [origin, runIds ?? null]);
  }

  /** See {@link Store.listStreamedRuns}. */
  async listStreamedRuns(origin: string, now: number): Promise<string[]> {
    return (await this.query<{ runId: string }>(STREAMED_RUNS, [origin, now])).map((row) => row.runId);
  }

  /**
   * See {@link Store.writeLiveDeltas}: one statement into UNLOGGED tables (no WAL), with a NOTIFY on
   * the schema's live channel. Only runs some server streams are ever written, so the NOTIFY's
   * commit lock is paid only by those.
   */
  async writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void> {
    if (records.length === 0) return;
    await this.ensureReady();
    await this.runner.write(WRITE_LIVE, writeLiveParams(origin, records, now, channelName(liveChannel(this.config.schema))));
  }

  /** See {@link Store.readLiveDeltas}. */
  async readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit = 1000): Promise<LiveDeltaRecord[]> {
    if (runIds.length === 0) return [];
    return liveRecords(await this.query<LiveDeltaRow & Record<string, unknown>>(READ_LIVE, [afterId, origin, runIds, limit]));
  }

  /** See {@link Store.pruneLiveDeltas}. */
  async pruneLiveDeltas(before: number): Promise<number> {
    await this.query(PRUNE_LIVE_LISTENERS, [before]);
    return (await this.query(PRUNE_LIVE, [before])).length;
  }

  /** See {@link Store.onLiveDeltas}: LISTENs on the schema's live channel (its own connection) while subscribed. */
  onLiveDeltas(listener: () => void): () => void {
    return this.liveNotices.subscribe(() => listener());
  }

  /** Resolves once the live channel is listened on (after the first {@link PostgresStore.onLiveDeltas}); for tests. */
  async listeningForLiveDeltas(): Promise<void> {
    await this.liveNotices.listening();
  }

  /** Resolves once the runs subscribed to with {@link PostgresStore.onJournal} are listened for and advertised. */
  async listeningForJournal(): Promise<void> {
    await this.journalNotices.listening();
  }

  /** Resolves once wake-ups are being listened for (after the first {@link PostgresStore.onWake}). */
  async listening(): Promise<void> {
    await this.wakes.listening();
  }

  /** See {@link Store.createRun}. */
  async createRun(run: NewRun, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      const record = await session.createRun(run);
      if (record) {
        await insertBlobs(tx, run.blobs);
        await session.flush();
        return { run: record, created: true };
      }
      return { run: await mustGetRun(tx, run.runId), created: false };
    });
  }

  /** See {@link Store.createRuns}. */
  async createRuns(runs: readonly NewRun[], now: number): Promise<{ run: RunRecord; created: boolean }[]> {
    if (runs.length === 0) return [];
    return this.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      const records = await session.createRuns(runs);
      await insertBlobs(
        tx,
        runs.flatMap((run, i) => (records[i] ? (run.blobs ?? []) : [])),
      );
      await session.flush();
      const missing = runs.filter((_, i) => !records[i]).map((run) => run.runId);
      const existing = new Map<string, RunRecord>();
      if (missing.length > 0) for (const row of await tx.query<StateRow & { input: string }>(GET_RUNS, [missing])) existing.set(row.runId, toRun(row));
      return runs.map((run, i) => {
        const record = records[i];
        if (record) return { run: record, created: true };
        const found = existing.get(run.runId);
        if (!found) throw new RunNotFoundError(run.runId);
        return { run: found, created: false };
      });
    });
  }

  /** See {@link Store.createRunWithJournal}. */
  async createRunWithJournal(run: NewRun, entries: readonly CopiedEntry[], now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      const record = await session.createRunWithJournal(run, entries);
      if (record) {
        await insertBlobs(tx, run.blobs);
        await session.flush();
        return { run: record, created: true };
      }
      return { run: await mustGetRun(tx, run.runId), created: false };
    });
  }

  /** See {@link Store.listPrunableRuns}. */
  async listPrunableRuns(query: PruneQuery): Promise<RunRecord[]> {
    return listPrunable((text, values) => this.query(text, values), query);
  }

  /** See {@link Store.deleteRuns}. */
  async deleteRuns(runs: readonly { runId: string; lastSeq: number }[]): Promise<string[]> {
    if (runs.length === 0) return [];
    return this.tx(0, (tx) => deleteRunRows(tx, runs));
  }

  /** See {@link Store.readRunRows}. */
  async readRunRows(runId: string): Promise<RunImport | undefined> {
    return this.tx(0, (tx) => readRows(tx, runId));
  }

  /** See {@link Store.importRun}. */
  async importRun(data: RunImport): Promise<void> {
    await this.tx(0, (tx) => importRows(tx, data));
  }

  /** See {@link Store.listRunEntries}. */
  async listRunEntries(query: RunEntriesQuery): Promise<RunEntry[]> {
    const params = runEntriesParams(query);
    return toRunEntries(await this.query(RUN_ENTRIES_SQL, params));
  }

  /** See {@link Store.countRuns}. */
  async countRuns(filter?: RunFilter): Promise<RunCount[]> {
    const filtered = filter === undefined ? undefined : countRunsQuery(filter, [...new Set(filter.status ?? [])]);
    return (await (filtered ? this.query<RunCount>(filtered.text, filtered.values) : this.query<RunCount>(COUNT_RUNS))).map((row) => ({
      workflow: row.workflow,
      status: row.status,
      count: Number(row.count),
    }));
  }

  /** See {@link Store.debounceRun}. */
  async debounceRun(run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }> {
    return this.tx(now, (tx) => debounceRun(tx, run, key, startAt, tx.now));
  }

  /** See {@link Store.queueStats}. In database-clock mode `now` is ignored. */
  async queueStats(now: number): Promise<QueueStat[]> {
    return this.tx(now, (tx) => queueStats(tx, tx.now));
  }

  /** See {@link Store.getRun}. */
  async getRun(runId: string): Promise<RunRecord | undefined> {
    const [row] = await this.query<StateRow & { input: string }>(GET_RUN, [runId]);
    return row && toRun(row);
  }

  /** See {@link Store.getRunTags}. */
  async getRunTags(runId: string): Promise<Record<string, string>> {
    return tagsOf(await this.query<{ key: string; value: string }>(GET_TAGS, [runId]));
  }

  /** See {@link Store.readAgentMessages}. */
  async readAgentMessages(runId: string, options?: { fromSeq?: number; throughSeq?: number; limit?: number }): Promise<AgentMessageRow[]> {
    return this.query<AgentMessageRow>(READ_AGENT_MESSAGES, [runId, ...messageBounds(options)]);
  }

  /** See {@link Store.listToolCalls}. */
  async listToolCalls(runId: string): Promise<ToolCallRow[]> {
    return this.query<ToolCallRow>(LIST_TOOL_CALLS, [runId]);
  }

  /** See {@link Store.getRunValue}. */
  async getRunValue(runId: string, kind: RunValueKind, name: string): Promise<RunValue | undefined> {
    const [row] = await this.query<RunValue>(GET_VALUE, [runId, kind, name]);
    return row;
  }

  /** See {@link Store.listDueDeadlines}. */
  async listDueDeadlines(now: number, limit: number): Promise<RunDeadline[]> {
    return this.query<RunDeadline>(DUE_DEADLINES, [now, limit]);
  }

  /** See {@link Store.clearDeadline}. */
  async clearDeadline(runId: string): Promise<boolean> {
    return (await this.query(CLEAR_DEADLINE, [runId])).length > 0;
  }

  /** See {@link Store.listRuns}. */
  async listRuns(query: ListRunsQuery): Promise<RunPage> {
    const limit = pageLimit(query.limit);
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const { text, values } = listRunsQuery(query, [...new Set(query.status ?? [])], cursor, limit + 1);
    const rows = (await this.query<StateRow & { input: string }>(text, values)).map(toRun);
    const runs = rows.slice(0, limit);
    const last = runs[runs.length - 1];
    return rows.length > limit && last ? { runs, nextCursor: encodeCursor(last) } : { runs };
  }

  /** See {@link Store.readJournal}. */
  async readJournal(runId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<JournalEntry[]> {
    const limit = options.limit === undefined ? null : Math.max(0, options.limit);
    return (await this.query<EntryRow>(READ_JOURNAL, [runId, options.afterSeq ?? 0, limit])).map(toEntry);
  }

  /** See {@link Store.searchJournal}: tsvector ('simple' configuration), any of the query's words, ranked by ts_rank. */
  async searchJournal(runId: string, query: string, limit: number): Promise<JournalTextHit[]> {
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    return this.query<JournalTextHit>(SEARCH_TEXT, [runId, terms.join(" | "), Math.max(0, limit)]);
  }

  /** See {@link Store.readJournalForResume}. */
  async readJournalForResume(runId: string): Promise<JournalEntry[]> {
    return readForResume({
      latestCheckpointBelow: async (below) => (await this.query<EntryRow>(LATEST_CHECKPOINT, [runId, below])).map(toEntry)[0],
      range: async (from, below) => (await this.query<EntryRow>(READ_JOURNAL_RANGE, [runId, from, below])).map(toEntry),
      seqs: async (seqs) => (await this.query<EntryRow>(READ_JOURNAL_SEQS, [runId, seqs])).map(toEntry),
    });
  }

  /**
   * See {@link Store.commit}: the whole batch is one transaction. A batch of step intents and
   * results (plain appends to running runs, without blobs) is one statement in one round trip, its
   * own transaction ({@link APPEND_PLAIN_FN}); when some run of it is not held under its epoch
   * that statement writes nothing and the batch takes the transaction below. There plain appends
   * again take one statement, and the writes it does not apply, and every other kind of write,
   * lock their runs and go through the write session, which says why a write is refused.
   */
  async commit(writes: RunWrite[], now: number): Promise<CommitResult[]> {
    if (writes.length === 0) return [];
    const plain = plainAppends(writes);
    if (plain && !writes.some((write) => write.blobs && write.blobs.length > 0)) {
      const results = await this.appendPlain(writes, plain, now);
      if (results) return results;
    }
    return this.tx(now, async (tx) => {
      const results: (CommitResult | undefined)[] = new Array(writes.length);
      let rest = writes.map((_, i) => i);
      if (plain) {
        const rows = await tx.query<{ runId: string; base: string | number }>(APPEND_PLAIN, [...plain.params, tx.now, ...plain.entryParams]);
        const bases = new Map(rows.map((row) => [row.runId, Number(row.base)]));
        tx.journaled(bases.keys());
        rest = [];
        writes.forEach((write, i) => {
          const base = bases.get(write.runId);
          if (base === undefined) return void rest.push(i);
          const offset = plain.offsets[i]!;
          results[i] = { ok: true, firstSeq: base + offset + 1, lastSeq: base + offset + write.entries.length };
        });
        if (rest.length === 0) {
          await insertBlobs(tx, acceptedBlobs(writes, results));
          return results as CommitResult[];
        }
      }
      const session = new WriteSession(tx);
      await session.lock(rest.map((i) => writes[i]!.runId));
      for (const i of rest) {
        const write = writes[i]!;
        // Checked before anything is written, so a refused write leaves the transaction intact.
        const run = session.state(write.runId);
        const refused = fenceReason(run, write.epoch);
        if (refused || !run) {
          results[i] = { ok: false, reason: refused ?? "not-found" };
          continue;
        }
        if (write.entries.length > 0) await session.append(run, write.epoch, write.entries);
        results[i] = { ok: true, firstSeq: run.lastSeq + 1, lastSeq: run.lastSeq + write.entries.length };
      }
      await session.flush();
      await insertBlobs(tx, acceptedBlobs(writes, results));
      return results as CommitResult[];
    });
  }

  /** The one-statement commit of plain appends; undefined (nothing written) when a run of the batch is not held under its epoch. */
  private async appendPlain(writes: readonly RunWrite[], plain: PlainAppends, now: number): Promise<CommitResult[] | undefined> {
    await this.ensureReady();
    const notice = this.runner.journalNotice(plain.params[0]);
    let rows: { runId: string; base: string | number }[];
    try {
      rows = await this.runner.write(APPEND_PLAIN_FN, [...plain.params, this.runner.nowParam(now), ...plain.entryParams, notice.channel, notice.payload]);
    } catch (error) {
      if (error instanceof pg.DatabaseError && error.code === NOT_HELD) return undefined;
      throw error;
    }
    const bases = new Map(rows.map((row) => [row.runId, Number(row.base)]));
    return writes.map((write, i) => {
      const base = bases.get(write.runId)!;
      const offset = plain.offsets[i]!;
      return { ok: true, firstSeq: base + offset + 1, lastSeq: base + offset + write.entries.length };
    });
  }

  /** See {@link Store.claimRuns}. In database-clock mode `request.now` is ignored. */
  async claimRuns(request: ClaimRequest): Promise<RunRecord[]> {
    if (request.limit < 1 || request.workflows.length === 0) return [];
    return this.tx(request.now, async (tx) => {
      const names = request.workflows.map((w) => w.name);
      const versions = request.workflows.map((w) => w.version);
      const found = await tx.query<StateRow & { claim_key: number }>(CLAIM_CANDIDATES, [names, versions, request.limit, tx.now]);
      const timed = { ...request, now: tx.now };
      const rows = found.map(({ claim_key: _, ...row }) => row);
      let states = rows.map((row) => toState(row));
      if (request.queues && request.queues.length > 0)
        states.push(...(await pickQueuedRuns(tx, timed, request.limit - states.length)).map((row) => toState(row)));
      // Runs re-claimed after an abnormal end may go to the dead-letter state instead (see common/recovery.ts).
      if (request.maxRecoveryAttempts !== undefined && states.some((state) => state.status === "running")) {
        states = await this.checkRecoveries(tx, states, request.maxRecoveryAttempts, tx.now);
      }
      if (states.length === 0) return [];
      const claimed = states.map((state) => claimRun(state, timed));
      const updated = await tx.query<StateRow & { input: string }>(UPDATE_STATES_RETURNING, stateArrays(claimed.map((c) => c.run)));
      await tx.query(INSERT_ENTRIES, entryArrays(claimed.map((c) => c.entry)));
      tx.journaled(claimed.map((c) => c.run.runId));
      const byId = new Map(updated.map((row) => [row.runId, toRun(row)]));
      return claimed.flatMap((c) => byId.get(c.run.runId) ?? []);
    });
  }

  /**
   * The dead-letter check of runs re-claimed after an abnormal end (see common/recovery.ts): writes
   * the dead ones' `run.dead` entries and returns the runs still to claim. Rows are locked by the claim.
   */
  private async checkRecoveries(tx: Tx, states: RunState[], max: number, now: number): Promise<RunState[]> {
    const keep: RunState[] = [];
    for (const state of states) {
      if (state.status !== "running") {
        keep.push(state);
        continue;
      }
      const attempt = (await tx.query<EntryRow>(LATEST_ATTEMPT, [state.runId])).map(toEntry);
      const [stored] = await tx.query<{ n: number }>(GET_RECOVERY_FAILURES, [state.runId]);
      const verdict = recoveryVerdict(state, attempt, Number(stored?.n ?? 0), max, now);
      await tx.query(SET_RECOVERY_FAILURES, [state.runId, verdict.failures]);
      if (!verdict.dead) {
        keep.push(state);
        continue;
      }
      await tx.query(UPDATE_STATES, stateArrays([verdict.dead.run]));
      await tx.query(INSERT_ENTRIES, entryArrays([verdict.dead.entry]));
      await tx.query(CLOSE_HUMANS, [[state.runId], ["dead"], now]);
      tx.journaled([state.runId]);
    }
    return keep;
  }

  /** See {@link Store.countVersions}. */
  async countVersions(): Promise<VersionCount[]> {
    const rows = await this.query<VersionCount>(COUNT_VERSIONS);
    return rows.map((row) => ({ workflow: row.workflow, version: row.version, status: row.status, count: Number(row.count) }));
  }

  /** See {@link Store.setVersionDrained}. */
  async setVersionDrained(workflow: string, version: string, drained: boolean, now: number): Promise<boolean> {
    return this.tx(now, async (tx) => {
      const rows = drained
        ? await tx.query(`${DRAIN_VERSION.text} RETURNING 1`, [workflow, version, tx.now])
        : await tx.query(`${UNDRAIN_VERSION.text} RETURNING 1`, [workflow, version]);
      return rows.length > 0;
    });
  }

  /** See {@link Store.listDrainedVersions}. */
  async listDrainedVersions(): Promise<DrainedVersion[]> {
    const rows = await this.query<{ workflow: string; version: string; drainedAt: string | number }>(LIST_DRAINED);
    return rows.map((row) => ({ workflow: row.workflow, version: row.version, drainedAt: Number(row.drainedAt) }));
  }

  /** See {@link Store.renewLeases}. In database-clock mode `request.now` is ignored. */
  async renewLeases(request: RenewRequest): Promise<string[]> {
    if (request.leases.length === 0) return [];
    const rows = await this.query<{ runId: string; leaseEpoch: number }>(RENEW_LEASES, [
      request.workerId,
      request.leases.map((lease) => lease.runId),
      request.leases.map((lease) => lease.epoch),
      this.runner.nowParam(request.now),
      request.leaseMs,
    ]);
    const renewed = new Set(rows.map((row) => `${row.leaseEpoch}:${row.runId}`));
    return request.leases.filter((lease) => !renewed.has(`${lease.epoch}:${lease.runId}`)).map((lease) => lease.runId);
  }

  /** See {@link Store.controlRun}. */
  async controlRun(runId: string, allowed: readonly RunStatus[], entry: NewEntry, now: number): Promise<{ run: RunRecord; applied: boolean }> {
    return this.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      await session.lock([runId]);
      const run = session.state(runId);
      if (!run) throw new RunNotFoundError(runId);
      if (!allowed.includes(run.status)) return { run: await mustGetRun(tx, runId), applied: false };
      const fenced = fenceOut(run);
      await session.append(fenced, fenced.leaseEpoch, [entry]);
      await session.flush();
      return { run: await mustGetRun(tx, runId), applied: true };
    });
  }

  /** See {@link Store.sendEvent}. */
  async sendEvent(event: NewInboxEvent, now: number): Promise<{ duplicate: boolean }> {
    return this.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      await session.lock([event.runId]);
      const run = session.state(event.runId);
      if (!run) throw new RunNotFoundError(event.runId);
      if ((await tx.query(FIND_INBOX, [event.runId, event.eventId])).length > 0) return { duplicate: true };
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `send event "${event.type}"`);
      await insertBlobs(tx, event.blobs);
      await tx.query(INSERT_INBOX, [event.runId, event.type, event.eventId, event.payload, tx.now]);
      await session.wake(event.runId);
      await session.flush();
      return { duplicate: false };
    });
  }

  /** See {@link Store.acquireStepSlots}. */
  async acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant> {
    return this.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      const grant = await acquireSlots(tx, session, request);
      await session.flush();
      return grant;
    });
  }

  /** See {@link Store.releaseStepSlots}. */
  async releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void> {
    await this.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      await releaseSlots(tx, session, runId, opKey, buckets);
      await session.flush();
    });
  }

  /** See {@link Store.pendingEvents}. */
  async pendingEvents(runId: string, type: string, limit?: number): Promise<InboxEvent[]> {
    return this.query<InboxRow>(PENDING_EVENTS, [runId, type, limit === undefined ? null : Math.max(0, limit)]);
  }

  /** See {@link Store.listInbox}. */
  async listInbox(runId: string): Promise<InboxEvent[]> {
    return this.query<InboxRow>(LIST_INBOX, [runId]);
  }

  /** See {@link Store.getHumanRequest}. */
  async getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    const [row] = await this.query<HumanRow>(GET_HUMAN, [requestId]);
    return row && toHuman(row);
  }

  /** See {@link Store.listHumanRequests}. */
  async listHumanRequests(query: ListHumanRequestsQuery): Promise<HumanRequest[]> {
    const { text, values } = listHumanQuery(query, pageLimit(query.limit, 1000));
    return (await this.query<HumanRow>(text, values)).map(toHuman);
  }

  /** See {@link Store.answerHuman}. */
  async answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void> {
    await this.tx(now, async (tx) => {
      const [found] = await tx.query<HumanRow>(GET_HUMAN, [requestId]);
      if (!found) throw new HumanRequestNotFoundError(requestId);
      // The run first, then the request: the order a commit with human.answered locks them in.
      const session = new WriteSession(tx);
      await session.lock([found.runId]);
      const [request] = await tx.query<HumanRow>(LOCK_HUMAN, [requestId]);
      if (!request) throw new HumanRequestNotFoundError(requestId);
      if (request.status === "closed") throw new HumanRequestClosedError(requestId, request.closedReason ?? "finished");
      if (request.status === "answered" || (await tx.query(FIND_INBOX, [request.runId, requestId])).length > 0) throw new HumanRequestAnsweredError(requestId);
      const run = session.state(request.runId);
      if (!run) throw new RunNotFoundError(request.runId);
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `answer human request "${requestId}"`);
      const payload = encode(answer);
      await tx.query(INSERT_INBOX, [run.runId, `human:${requestId}`, requestId, payload, tx.now]);
      await tx.query(ANSWER_HUMAN, [payload, tx.now, requestId]);
      await session.wake(run.runId);
      await session.flush();
    });
  }

  /** See {@link Store.claimOutbox}. In database-clock mode `now` is ignored. */
  async claimOutbox(request: OutboxClaimRequest): Promise<OutboxMessage[]> {
    if (request.topics.length === 0) return [];
    const rows = await this.query<OutboxMessage>(CLAIM_OUTBOX, claimOutboxParams(request, this.runner.nowParam(request.now)));
    return rows.sort((a, b) => a.id - b.id);
  }

  /** See {@link Store.settleOutbox}. In database-clock mode `now` is ignored. */
  async settleOutbox(settlement: OutboxSettlement, now: number): Promise<boolean> {
    const { statement, params } = settleOutboxParams(settlement, this.runner.nowParam(now));
    return (await this.query(statement, params)).length === 1;
  }

  /** See {@link Store.listOutbox}. */
  async listOutbox(query: ListOutboxQuery): Promise<OutboxMessage[]> {
    const list = listOutboxQuery(query);
    return list ? this.query<OutboxMessage>(list.text, list.params) : [];
  }

  /** See {@link Store.getOutboxMessage}. */
  async getOutboxMessage(messageId: string): Promise<OutboxMessage | undefined> {
    return (await this.query<OutboxMessage>(GET_OUTBOX, [messageId]))[0];
  }

  /** See {@link Store.retryOutbox}. In database-clock mode `now` is ignored. */
  async retryOutbox(messageId: string, now: number): Promise<{ message: OutboxMessage; applied: boolean }> {
    return this.tx(now, async (tx) => {
      const applied = (await tx.query(RETRY_OUTBOX, [this.runner.nowParam(now), messageId])).length === 1;
      const [message] = await tx.query<OutboxMessage>(GET_OUTBOX, [messageId]);
      if (!message) throw new OutboxMessageNotFoundError(messageId);
      if (applied) tx.wake();
      return { message, applied };
    });
  }

  /** See {@link Store.upsertWorker}. In database-clock mode the heartbeat (and a new worker's start) is the database's time. */
  async upsertWorker(worker: WorkerRecord): Promise<void> {
    const database = this.config.clock === "database";
    await this.query(UPSERT_WORKER, [
      worker.workerId,
      worker.host,
      worker.pid,
      JSON.stringify(worker.workflows),
      worker.runsHeld,
      database ? null : worker.startedAt,
      database ? null : worker.heartbeatAt,
    ]);
  }

  /** See {@link Store.removeWorker}. */
  async removeWorker(workerId: string): Promise<void> {
    await this.query(REMOVE_WORKER, [workerId]);
  }

  /** See {@link Store.listWorkers}. */
  async listWorkers(since: number): Promise<WorkerRecord[]> {
    return (await this.query<WorkerRow>(LIST_WORKERS, [since])).map(toWorker);
  }

  /** See {@link Store.createToken}. */
  async createToken(token: TokenRecord): Promise<void> {
    await this.query(`INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, tokenParams(token));
  }

  /** See {@link Store.listTokens}. */
  async listTokens(): Promise<TokenRecord[]> {
    return (await this.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created_at DESC, id DESC`)).map(toToken);
  }

  /** See {@link Store.getToken}. */
  async getToken(id: string): Promise<TokenRecord | undefined> {
    const [row] = await this.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = $1`, [id]);
    return row && toToken(row);
  }

  /** See {@link Store.revokeToken}. */
  async revokeToken(id: string, now: number): Promise<boolean> {
    const rows = await this.query("UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id", [now, id]);
    return rows.length === 1;
  }

  /** See {@link Store.appendAudit}. */
  async appendAudit(entry: NewAuditEntry): Promise<AuditEntry> {
    const [row] = await this.query<AuditRow>(
      `INSERT INTO audit_log (at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5) RETURNING ${AUDIT_COLUMNS}`,
      [entry.at, entry.actor, entry.action, entry.target, entry.detail === null ? null : JSON.stringify(entry.detail)],
    );
    if (!row) throw new Error("PostgreSQL did not return the audit entry.");
    return toAudit(row);
  }

  /** See {@link Store.listAudit}. */
  async listAudit(query: ListAuditQuery): Promise<AuditEntry[]> {
    const { text, params } = auditQuery(query, (n) => `$${n}`);
    return (await this.query<AuditRow>(text, params)).map(toAudit);
  }

  /** See {@link Store.saveSchedule}. */
  async saveSchedule(definition: ScheduleDefinitionRecord, now: number): Promise<ScheduleRecord> {
    const stored = await this.getSchedule(definition.name);
    const statement = !stored
      ? schedules.insertSchedule(pgMarker, definition, now)
      : schedules.sameDefinition(stored, definition)
        ? undefined
        : schedules.redefineSchedule(pgMarker, definition, now);
    if (statement) await this.query(statement.sql, statement.params);
    const saved = await this.getSchedule(definition.name);
    if (!saved) throw new Error(`Schedule "${definition.name}" was deleted while it was being saved.`);
    return saved;
  }

  /** See {@link Store.getSchedule}. */
  async getSchedule(name: string): Promise<ScheduleRecord | undefined> {
    const [row] = await this.query<schedules.ScheduleRow>(`SELECT ${schedules.SCHEDULE_COLUMNS} FROM schedules WHERE name = $1`, [name]);
    return row && schedules.toSchedule(row);
  }

  /** See {@link Store.listSchedules}. */
  async listSchedules(): Promise<ScheduleRecord[]> {
    return (await this.query<schedules.ScheduleRow>(`SELECT ${schedules.SCHEDULE_COLUMNS} FROM schedules ORDER BY name`)).map(schedules.toSchedule);
  }

  /** See {@link Store.deleteSchedule}. */
  async deleteSchedule(name: string): Promise<boolean> {
    return (await this.query("DELETE FROM schedules WHERE name = $1 RETURNING name", [name])).length === 1;
  }

  /** See {@link Store.claimSchedule}. Times are the caller's (the engine's clock follows the database's). */
  async claimSchedule(name: string, owner: string, now: number, leaseMs: number): Promise<ScheduleRecord | undefined> {
    const statement = schedules.claimScheduleSql(pgMarker, Boolean, name, owner, now, leaseMs);
    const [row] = await this.query<schedules.ScheduleRow>(statement.sql, statement.params);
    return row && schedules.toSchedule(row);
  }

  /** See {@link Store.updateScheduleState}. */
  async updateScheduleState(name: string, owner: string, epoch: number, state: ScheduleState, now: number): Promise<boolean> {
    const statement = schedules.updateStateSql(pgMarker, name, owner, epoch, state, now);
    return (await this.query(`${statement.sql} RETURNING name`, statement.params)).length === 1;
  }

  /** See {@link Store.setSchedulePaused}. */
  async setSchedulePaused(name: string, paused: boolean, now: number): Promise<ScheduleRecord | undefined> {
    const statement = schedules.setPausedSql(pgMarker, Boolean, name, paused, now);
    const [row] = await this.query<schedules.ScheduleRow>(statement.sql, statement.params);
    return row && schedules.toSchedule(row);
  }

  /** See {@link Store.listStuckRuns}. In database-clock mode `now` is ignored. */
  async listStuckRuns(now: number, graceMs: number, limit?: number): Promise<RunRecord[]> {
    const rows = await this.query<StateRow & { input: string }>(STUCK_RUNS, [this.runner.nowParam(now), graceMs, pageLimit(limit)]);
    return rows.map(toRun);
  }

  /** See {@link Store.readBlobs}. */
  async readBlobs(hashes: readonly string[]): Promise<PayloadBlob[]> {
    if (hashes.length === 0) return [];
    return this.query<PayloadBlob>(READ_BLOBS, [hashes]);
  }

  /** See {@link Store.deleteUnreferencedBlobs}. */
  async deleteUnreferencedBlobs(before: number): Promise<number> {
    return this.tx(before, async (tx) => (await tx.query(DELETE_UNREFERENCED_BLOBS, [before])).length);
  }

  private async dbNow(): Promise<number> {
    const [row] = await this.query<{ now: number }>(`SELECT ${DB_NOW} AS now`);
    if (!row) throw new Error("PostgreSQL did not return the clock.");
    return row.now;
  }

  private async query<R extends pg.QueryResultRow>(statement: Sql | string, values: readonly unknown[] = []): Promise<R[]> {
    await this.ensureReady();
    return this.runner.query<R>(statement, values);
  }

  private async tx<T>(now: number, fn: (tx: Tx) => Promise<T>): Promise<T> {
    await this.ensureReady();
    return this.runner.transaction(now, fn);
  }

  /**
   * Before the first operation of a store that was not migrated by this instance: the same
   * durability check as migrate(), and the schema must be current. Retried after a failure.
   */
  private async ensureReady(): Promise<void> {
    this.ready ??= this.runner
      .withClient(async (client) => {
        checkDurability(await readDurability(client), this.url, this.config.allowWeakDurability);
        const found = await postgresSchemaVersion(client, this.config.schema);
        if (found !== latestPostgresVersion()) {
          throw new Error(
            `The store ${this.url} has schema version ${found}, not ${latestPostgresVersion()}: call migrate() before using it (openStore does).`,
          );
        }
      })
      .catch((error: unknown) => {
        this.ready = undefined;
        throw error;
      });
    await this.ready;
  }
}

async function mustGetRun(tx: Tx, runId: string): Promise<RunRecord> {
  const [row] = await tx.query<StateRow & { input: string }>(GET_RUN, [runId]);
  if (!row) throw new RunNotFoundError(runId);
  return toRun(row);
}

/** A batch of plain appends as {@link APPEND_PLAIN}'s parameters: run ids, epochs, entry counts; then the entries' columns. */
interface PlainAppends {
  params: [string[], number[], number[]];
  entryParams: unknown[];
  offsets: number[];
}

/**
 * The parameters of {@link APPEND_PLAIN} for `writes`, and each write's offset within its run's
 * entries; or undefined when the batch is not all plain appends (common/plan-write
 * `isPlainAppend`), or has an empty write, or writes one run under two epochs.
 */
function plainAppends(writes: readonly RunWrite[]): PlainAppends | undefined {
  const runs = new Map<string, { epoch: number; n: number }>();
  const offsets: number[] = [];
  const entryParams: unknown[][] = [[], [], [], [], []];
  for (const write of writes) {
    if (write.entries.length === 0 || !write.entries.every(isPlainAppend)) return undefined;
    let run = runs.get(write.runId);
    if (!run) runs.set(write.runId, (run = { epoch: write.epoch, n: 0 }));
    else if (run.epoch !== write.epoch) return undefined;
    offsets.push(run.n);
    for (const entry of write.entries) {
      run.n += 1;
      entryParams[0]!.push(write.runId);
      entryParams[1]!.push(run.n);
      entryParams[2]!.push(entry.kind);
      entryParams[3]!.push(entry.opKey);
      entryParams[4]!.push(entry.payload);
    }
  }
  const ids = [...runs.keys()];
  return { params: [ids, ids.map((id) => runs.get(id)!.epoch), ids.map((id) => runs.get(id)!.n)], entryParams, offsets };
}

const pgMarker = (n: number): string => `$${n}`;
