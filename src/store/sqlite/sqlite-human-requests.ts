import { HumanRequestAnsweredError, HumanRequestClosedError, HumanRequestNotFoundError, RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import type { HumanAnswer } from "../../core/journal.js";
import { isTerminal } from "../../core/run.js";
import { encode } from "../../core/serialize.js";
import type { HumanRequest, HumanRequestStore, ListHumanRequestsQuery } from "../../core/store.js";
import { pageLimit } from "../common/list-query.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { listHumanQuery } from "./sqlite-human-requests-queries.js";
import { toHuman, type HumanRow } from "./sqlite-rows.js";
import type { SqliteWriter } from "./sqlite-write.js";

/** The {@link HumanRequestStore} part of {@link SqliteStore}: questions for people, and their answers. */
export class SqliteHumanRequests implements HumanRequestStore {
  constructor(
    private readonly c: SqliteConnection,
    private readonly w: SqliteWriter,
  ) {}

  /** See {@link Store.getHumanRequest}. */
  async getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    const row = this.c.q.getHuman.get(requestId) as HumanRow | undefined;
    return row && toHuman(row);
  }

  /** See {@link Store.listHumanRequests}. */
  async listHumanRequests(query: ListHumanRequestsQuery): Promise<HumanRequest[]> {
    const { text, values } = listHumanQuery(query, pageLimit(query.limit, 1000));
    return (this.c.q.prepared(text).all(...values) as HumanRow[]).map(toHuman);
  }

  /** See {@link Store.answerHuman}. */
  async answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void> {
    this.c.immediate(() => {
      const q = this.c.q;
      const request = q.getHuman.get(requestId) as HumanRow | undefined;
      if (!request) throw new HumanRequestNotFoundError(requestId);
      if (request.status === "closed") throw new HumanRequestClosedError(requestId, request.closedReason ?? "finished");
      if (request.status === "answered" || q.findInbox.get(request.runId, requestId)) throw new HumanRequestAnsweredError(requestId);
      const run = this.w.loadState(request.runId);
      if (!run) throw new RunNotFoundError(request.runId);
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `answer human request "${requestId}"`);
      const payload = encode(answer);
      q.insertInbox.run(run.runId, `human:${requestId}`, requestId, payload, now);
      q.answerHuman.run(payload, now, requestId);
      this.w.wake(run, now);
    });
  }
}
