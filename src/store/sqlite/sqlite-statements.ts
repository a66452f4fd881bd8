import type Database from "better-sqlite3";
import { INSERT_INBOX, GET_INBOX, FIND_INBOX, CONSUME_INBOX, PENDING_EVENTS, LIST_INBOX } from "./sqlite-inbox-queries.js";
import { ANSWER_HUMAN, CLOSE_HUMANS, EXTEND_HUMAN, GET_HUMAN, INSERT_HUMAN, REOPEN_HUMANS } from "./sqlite-human-requests-queries.js";
import { INSERT_ENTRY, INSERT_TEXT, LATEST_CHECKPOINT, READ_JOURNAL, READ_JOURNAL_RANGE, READ_JOURNAL_SEQS, SEARCH_TEXT } from "./sqlite-journal-queries.js";
import { RENEW_LEASE, claimProbeQuery, claimQuery } from "./sqlite-leases-queries.js";
import { LIST_WORKERS, REMOVE_WORKER, STUCK_RUNS, UPSERT_WORKER } from "./sqlite-operations-queries.js";
import { ADVANCE_SEQ, COUNT_RUNS, GET_FENCE, GET_RUN, GET_STATE, INSERT_RUN, UPDATE_STATE } from "./sqlite-runs-queries.js";

type Statement = Database.Statement;

/**
 * The prepared statements of a {@link SqliteStore}, whose texts live in the `sqlite-<entity>-queries.ts`
 * modules. The frequent ones are prepared once, up front; the rest on first use ({@link SqliteStatements.prepared},
 * cached by text). Prepared again after a migration (the store makes a new instance).
 */
export class SqliteStatements {
  readonly getState: Statement;
  readonly getFence: Statement;
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
  private readonly probes = new Map<number, Statement>();
  private readonly cache = new Map<string, Statement>();

  constructor(private readonly db: Database.Database) {
    this.countRuns = db.prepare(COUNT_RUNS);
    this.getState = db.prepare(GET_STATE);
    this.getFence = db.prepare(GET_FENCE);
    this.getRun = db.prepare(GET_RUN);
    this.insertRun = db.prepare(INSERT_RUN);
    this.updateState = db.prepare(UPDATE_STATE);
    this.advanceSeq = db.prepare(ADVANCE_SEQ);
    this.insertEntry = db.prepare(INSERT_ENTRY);
    this.readJournal = db.prepare(READ_JOURNAL);
    this.latestCheckpoint = db.prepare(LATEST_CHECKPOINT);
    this.readJournalRange = db.prepare(READ_JOURNAL_RANGE);
    this.extendHuman = db.prepare(EXTEND_HUMAN);
    this.insertText = db.prepare(INSERT_TEXT);
    this.searchText = db.prepare(SEARCH_TEXT);
    this.readJournalSeqs = db.prepare(READ_JOURNAL_SEQS);
    this.renewLease = db.prepare(RENEW_LEASE);
    this.insertInbox = db.prepare(INSERT_INBOX);
    this.getInbox = db.prepare(GET_INBOX);
    this.findInbox = db.prepare(FIND_INBOX);
    this.consumeInbox = db.prepare(CONSUME_INBOX);
    this.pendingEvents = db.prepare(PENDING_EVENTS);
    this.listInbox = db.prepare(LIST_INBOX);
    this.insertHuman = db.prepare(INSERT_HUMAN);
    this.getHuman = db.prepare(GET_HUMAN);
    this.closeHumans = db.prepare(CLOSE_HUMANS);
    this.reopenHumans = db.prepare(REOPEN_HUMANS);
    this.answerHuman = db.prepare(ANSWER_HUMAN);
    this.upsertWorker = db.prepare(UPSERT_WORKER);
    this.removeWorker = db.prepare(REMOVE_WORKER);
    this.listWorkers = db.prepare(LIST_WORKERS);
    this.stuckRuns = db.prepare(STUCK_RUNS);
  }

  /** A statement with this text, prepared on first use (for the rarely run ones, and those whose text depends on the call). */
  prepared(text: string): Statement {
    let statement = this.cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.cache.set(text, statement);
    }
    return statement;
  }

  /** The claim probe for `pairs` (workflow, version) pairs (see `claimProbeQuery`), prepared once per number of pairs. */
  claimProbe(pairs: number): Statement {
    return this.perPairs(this.probes, pairs, claimProbeQuery);
  }

  /** The claim statement for `pairs` (workflow, version) pairs (see `claimQuery`), prepared once per number of pairs. */
  claim(pairs: number): Statement {
    return this.perPairs(this.claims, pairs, claimQuery);
  }

  private perPairs(cache: Map<number, Statement>, pairs: number, text: (pairs: number) => string): Statement {
    let statement = cache.get(pairs);
    if (!statement) {
      statement = this.db.prepare(text(pairs));
      cache.set(pairs, statement);
    }
    return statement;
  }
}
