import { tagCondition } from "../common/live-sql.js";
import type Database from "better-sqlite3";
import { TERMINAL_STATUSES_SQL, type RunStatus } from "../../core/run.js";
import type { ClaimRequest, ListHumanRequestsQuery, ListRunsQuery, RunFilter } from "../../core/store.js";
import { likePattern, type RunCursor } from "../common/list-query.js";
import { ENTRY_COLUMNS, HUMAN_COLUMNS, INBOX_COLUMNS, RUN_COLUMNS, STATE_COLUMNS, WORKER_COLUMNS } from "./sqlite-rows.js";

type Statement = Database.Statement;

/** Parameters for {@link SqliteQueries.claim}, in placeholder order. */
export function claimParams(request: ClaimRequest): unknown[] {
  const pairs = request.workflows.flatMap((w) => [w.name, w.version]);
  return [...pairs, request.limit, request.now, ...pairs, request.limit, request.now, ...pairs, request.limit, ...pairs, request.limit, request.limit];
}

/**
 * Every statement a {@link SqliteStore} runs, prepared once. Statements whose shape
 * depends on the call (claims by number of workflow versions, list filters) are
 * prepared on first use and cached by shape.
 */
export class SqliteQueries {
  readonly getState: Statement;
  readonly getRun: Statement;
  readonly insertRun: Statement;
  readonly updateState: Statement;
  readonly advanceSeq: Statement;
  readonly insertEntry: Statement;
  readonly readJournal: Statement;
  readonly latestCheckpoint: Statement;
  readonly readJournalRange: Statement;
  readonly readJournalSeqs: Statement;
  readonly insertText: Statement;
  readonly extendHuman: Statement;
  readonly searchText: Statement;
  readonly renewLease: Statement;
  readonly insertInbox: Statement;
  readonly getInbox: Statement;
  readonly findInbox: Statement;
  readonly consumeInbox: Statement;
  readonly pendingEvents: Statement;
  readonly listInbox: Statement;
  readonly insertHuman: Statement;
  readonly getHuman: Statement;
  readonly answerHuman: Statement;
  readonly closeHumans: Statement;
  readonly reopenHumans: Statement;
  readonly upsertWorker: Statement;
  readonly removeWorker: Statement;
  readonly listWorkers: Statement;
  readonly stuckRuns: Statement;
  readonly countRuns: Statement;
  private readonly claims = new Map<number, Statement>();
  private readonly lists = new Map<string, Statement>();
  private readonly humanLists = new Map<string, Statement>();
  private readonly cache = new Map<string, Statement>();

  /** A statement with a fixed text, prepared on first use (for the rarely run ones). */
  prepared(text: string): Statement {
    let statement = this.cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.cache.set(text, statement);
    }
    return statement;
  }

  constructor(private readonly db: Database.Database) {
    this.countRuns = db.prepare("SELECT workflow, status, COUNT(*) AS count FROM runs GROUP BY workflow, status ORDER BY workflow, status");
    this.getState = db.prepare(`SELECT ${STATE_COLUMNS} FROM runs WHERE run_id = ?`);
    this.getRun = db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`);
    this.insertRun = db.prepare(
      `INSERT INTO runs (run_id, workflow, version, status, input, output, error, parent_run_id, parent_op_key, wake_at, waiting_for,
         lease_owner, lease_expires_at, lease_epoch, last_seq, wake_pending, created_at, updated_at, finished_at)
       VALUES (@runId, @workflow, @version, @status, @input, @output, @error, @parentRunId, @parentOpKey, @wakeAt, @waitingFor,
         @leaseOwner, @leaseExpiresAt, @leaseEpoch, @lastSeq, @wakePending, @createdAt, @updatedAt, @finishedAt)
       ON CONFLICT (run_id) DO NOTHING`,
    );
    this.updateState = db.prepare(
      `UPDATE runs SET status = @status, output = @output, error = @error, wake_at = @wakeAt, waiting_for = @waitingFor,
         lease_owner = @leaseOwner, lease_expires_at = @leaseExpiresAt, lease_epoch = @leaseEpoch, last_seq = @lastSeq,
         wake_pending = @wakePending, updated_at = @updatedAt, finished_at = @finishedAt
       WHERE run_id = @runId`,
    );
    // Most appends (step intents and results) change nothing in the row but these two columns: leaving
    // the indexed ones out of the SET list spares SQLite rewriting three index entries per commit.
    this.advanceSeq = db.prepare("UPDATE runs SET last_seq = ?, updated_at = ? WHERE run_id = ?");
    this.insertEntry = db.prepare("INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at) VALUES (?, ?, ?, ?, ?, ?, ?)");
    this.readJournal = db.prepare(`SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`);
    // Served by the partial index journal_checkpoint_idx (the IN list must match the index's).
    this.latestCheckpoint = db.prepare(
      `SELECT ${ENTRY_COLUMNS} FROM journal
       WHERE run_id = ? AND kind IN ('loop.snapshot', 'loop.completed') AND seq < ? ORDER BY seq DESC LIMIT 1`,
    );
    this.readJournalRange = db.prepare(`SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = ? AND seq >= ? AND seq < ? ORDER BY seq`);
    this.extendHuman = db.prepare("UPDATE human_requests SET timeout_at = ? WHERE request_id = ? AND status = 'pending'");
    this.insertText = db.prepare("INSERT INTO journal_text (body, run_id, seq, op_key) VALUES (?, ?, ?, ?)");
    this.searchText = db.prepare(
      "SELECT seq, op_key AS opKey, body AS text FROM journal_text WHERE journal_text MATCH ? AND run_id = ? ORDER BY bm25(journal_text), seq LIMIT ?",
    );
    this.readJournalSeqs = db.prepare(`SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = ? AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq`);
    this.renewLease = db.prepare(
      `UPDATE runs SET lease_expires_at = ?
       WHERE run_id = ? AND lease_epoch = ? AND lease_owner = ? AND status NOT IN ${TERMINAL_STATUSES_SQL}`,
    );
    this.insertInbox = db.prepare(
      `INSERT INTO inbox (run_id, type, event_id, payload, consumed_seq, received_at) VALUES (?, ?, ?, ?, NULL, ?)
       ON CONFLICT (run_id, event_id) DO NOTHING`,
    );
    this.getInbox = db.prepare(`SELECT ${INBOX_COLUMNS} FROM inbox WHERE id = ?`);
    this.findInbox = db.prepare("SELECT id FROM inbox WHERE run_id = ? AND event_id = ?");
    this.consumeInbox = db.prepare("UPDATE inbox SET consumed_seq = ? WHERE id = ?");
    this.pendingEvents = db.prepare(`SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = ? AND type = ? AND consumed_seq IS NULL ORDER BY id LIMIT ?`);
    this.listInbox = db.prepare(`SELECT ${INBOX_COLUMNS} FROM inbox WHERE run_id = ? ORDER BY id`);
    this.insertHuman = db.prepare(
      `INSERT INTO human_requests (request_id, run_id, op_key, question, options, status, answer, timeout_at, created_at, answered_at, context, closed_reason)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (request_id) DO NOTHING`,
    );
    this.getHuman = db.prepare(`SELECT ${HUMAN_COLUMNS} FROM human_requests WHERE request_id = ?`);
    this.closeHumans = db.prepare("UPDATE human_requests SET status = 'closed', closed_reason = ?, answered_at = ? WHERE run_id = ? AND status = 'pending'");
    this.reopenHumans = db.prepare(
      "UPDATE human_requests SET status = 'pending', closed_reason = NULL, answered_at = NULL WHERE run_id = ? AND status = 'closed'",
    );
    this.answerHuman = db.prepare("UPDATE human_requests SET status = 'answered', answer = ?, answered_at = ? WHERE request_id = ? AND status = 'pending'");
    this.upsertWorker = db.prepare(
      `INSERT INTO workers (worker_id, host, pid, workflows, runs_held, started_at, heartbeat_at)
       VALUES (@workerId, @host, @pid, @workflows, @runsHeld, @startedAt, @heartbeatAt)
       ON CONFLICT (worker_id) DO UPDATE SET host = excluded.host, pid = excluded.pid, workflows = excluded.workflows,
         runs_held = excluded.runs_held, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at`,
    );
    this.removeWorker = db.prepare("DELETE FROM workers WHERE worker_id = ?");
    this.listWorkers = db.prepare(`SELECT ${WORKER_COLUMNS} FROM workers WHERE heartbeat_at > ? ORDER BY heartbeat_at DESC, worker_id`);
    // One part per kind of stuck run (common/run-state isStuck), each pinned to the index that
    // holds just that kind, so the check costs a few index probes however many runs are held or parked.
    const stuck = (index: string, where: string) =>
      `SELECT * FROM (SELECT ${RUN_COLUMNS} FROM runs INDEXED BY ${index} WHERE ${where} ORDER BY created_at, run_id LIMIT @limit)`;
    this.stuckRuns = db.prepare(
      `SELECT * FROM (
         ${stuck("runs_stuck_idx", "status = 'suspended' AND wake_at IS NULL AND (waiting_for IS NULL OR waiting_for = '[]')")}
         UNION ALL ${stuck("runs_wake_idx", "status = 'suspended' AND wake_at < @before")}
         UNION ALL ${stuck("runs_pending_idx", "status = 'pending' AND updated_at < @before")}
         UNION ALL ${stuck("runs_lease_idx", "status = 'running' AND lease_expires_at < @before")}
         UNION ALL ${stuck("runs_lease_idx", "status = 'running' AND lease_expires_at IS NULL AND updated_at < @before")}
       ) ORDER BY createdAt, runId LIMIT @limit`,
    );
  }

  /**
   * The claim query for `pairs` (workflow, version) pairs; bind it with {@link claimParams}.
   * Queued runs (flow control) are left to {@link SqliteFlow}, except expired leases, which keep their slot.
   * Each kind of runnable run is read from its own index, already in claim order or
   * (expired leases, rare) from a narrow range, so a claim touches about `limit` rows
   * per kind however many runs are waiting or held.
   */
  claim(pairs: number): Statement {
    let statement = this.claims.get(pairs);
    if (!statement) {
      const versions = Array.from({ length: pairs }, () => "(workflow = ? AND version = ?)").join(" OR ");
      const part = (key: string, where: string, order: string) =>
        `SELECT * FROM (SELECT ${STATE_COLUMNS}, ${key} AS claimKey FROM runs WHERE ${where} AND (${versions}) ORDER BY ${order}, run_id LIMIT ?)`;
      // "+created_at" keeps the planner on the lease index instead of scanning every held run in creation order.
      statement = this.db.prepare(
        `SELECT * FROM (
           ${part("created_at", "status = 'pending' AND queue IS NULL", "created_at")}
           UNION ALL ${part("wake_at", "status = 'suspended' AND queue IS NULL AND wake_at <= ?", "wake_at")}
           UNION ALL ${part("created_at", "status = 'running' AND lease_expires_at <= ?", "+created_at")}
           UNION ALL ${part("created_at", "status = 'running' AND lease_expires_at IS NULL", "+created_at")}
         ) ORDER BY claimKey, runId LIMIT ?`,
      );
      this.claims.set(pairs, statement);
    }
    return statement;
  }

  /** The WHERE conditions of a listing's filters, with their parameters. */
  private runWhere(query: RunFilter, statuses: readonly RunStatus[]): { where: string[]; params: unknown[] } {
    const where: string[] = [];
    const params: unknown[] = [];
    if (statuses.length > 0) {
      where.push(`status IN (${statuses.map(() => "?").join(", ")})`);
      params.push(...statuses);
    }
    if (query.workflow !== undefined) {
      where.push("workflow = ?");
      params.push(query.workflow);
    }
    if (query.parentRunId === null) where.push("parent_run_id IS NULL");
    else if (query.parentRunId !== undefined) {
      where.push("parent_run_id = ?");
      params.push(query.parentRunId);
    }
    if (query.runIdPrefix !== undefined && query.runIdPrefix !== "") {
      // substr counts characters; `>=` lets SQLite start from the prefix in the run_id index.
      where.push("run_id >= ? AND substr(run_id, 1, ?) = ?");
      params.push(query.runIdPrefix, [...query.runIdPrefix].length, query.runIdPrefix);
    }
    if (query.q !== undefined && query.q !== "") {
      // LIKE ignores the case of ASCII letters; the error's message only (not its stack), when it is JSON.
      where.push(
        "(run_id LIKE ? ESCAPE '\\' OR workflow LIKE ? ESCAPE '\\' OR (CASE WHEN json_valid(error) THEN json_extract(error, '$.message') END) LIKE ? ESCAPE '\\'" +
          " OR input LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.run_id AND (t.key || ':' || t.value) LIKE ? ESCAPE '\\'))",
      );
      const pattern = likePattern(query.q);
      params.push(pattern, pattern, pattern, pattern, pattern);
    }
    if (query.createdAfter !== undefined) {
      where.push("created_at > ?");
      params.push(query.createdAfter);
    }
    if (query.createdBefore !== undefined) {
      where.push("created_at < ?");
      params.push(query.createdBefore);
    }
    for (const [key, value] of Object.entries(query.tags ?? {})) {
      where.push(tagCondition("?", "?"));
      params.push(key, value);
    }
    return { where, params };
  }

  /** The listRuns query for this combination of filters, with its parameters. */
  listRuns(query: ListRunsQuery, statuses: readonly RunStatus[], cursor: RunCursor | undefined, limit: number): { statement: Statement; params: unknown[] } {
    const { where, params } = this.runWhere(query, statuses);
    if (cursor) {
      where.push("(created_at < ? OR (created_at = ? AND run_id < ?))");
      params.push(cursor.createdAt, cursor.createdAt, cursor.runId);
    }
    params.push(limit);
    const key = where.join(" AND ");
    let statement = this.lists.get(key);
    if (!statement) {
      statement = this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs ${key ? `WHERE ${key}` : ""} ORDER BY created_at DESC, run_id DESC LIMIT ?`);
      this.lists.set(key, statement);
    }
    return { statement, params };
  }

  /** The countRuns query for these filters (grouped by workflow and status), with its parameters. */
  countFiltered(query: RunFilter, statuses: readonly RunStatus[]): { statement: Statement; params: unknown[] } {
    const { where, params } = this.runWhere(query, statuses);
    const key = `count:${where.join(" AND ")}`;
    let statement = this.lists.get(key);
    if (!statement) {
      statement = this.db.prepare(
        `SELECT workflow, status, COUNT(*) AS count FROM runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} GROUP BY workflow, status ORDER BY workflow, status`,
      );
      this.lists.set(key, statement);
    }
    return { statement, params };
  }

  /** The listHumanRequests query for these filters, with its parameters. */
  listHuman(query: ListHumanRequestsQuery, limit: number): { statement: Statement; params: unknown[] } {
    const where: string[] = [];
    const params: unknown[] = [];
    const desc = query.order === "desc";
    if (query.status !== undefined) {
      where.push("status = ?");
      params.push(query.status);
    }
    if (query.runId !== undefined) {
      where.push("run_id = ?");
      params.push(query.runId);
    }
    if (query.runIdPrefix !== undefined && query.runIdPrefix !== "") {
      where.push("substr(run_id, 1, ?) = ?");
      params.push([...query.runIdPrefix].length, query.runIdPrefix);
    }
    if (query.after !== undefined) {
      where.push(`(created_at, request_id) ${desc ? "<" : ">"} (?, ?)`);
      params.push(query.after.createdAt, query.after.requestId);
    }
    params.push(limit);
    const key = `${where.join(" AND ")}|${desc ? "desc" : "asc"}`;
    let statement = this.humanLists.get(key);
    if (!statement) {
      const direction = desc ? "DESC" : "ASC";
      statement = this.db.prepare(
        `SELECT ${HUMAN_COLUMNS} FROM human_requests ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at ${direction}, request_id ${direction} LIMIT ?`,
      );
      this.humanLists.set(key, statement);
    }
    return { statement, params };
  }
}
