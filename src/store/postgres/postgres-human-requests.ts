import { HumanRequestAnsweredError, HumanRequestClosedError, HumanRequestNotFoundError, RunFinishedError, RunNotFoundError } from "../../core/errors.js";
import type { HumanAnswer } from "../../core/journal.js";
import { isTerminal } from "../../core/run.js";
import { encode } from "../../core/serialize.js";
import type { HumanRequest, HumanRequestStore, ListHumanRequestsQuery } from "../../core/store.js";
import { pageLimit } from "../common/list-query.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { ANSWER_HUMAN, GET_HUMAN, LOCK_HUMAN, listHumanQuery } from "./postgres-human-requests-queries.js";
import { FIND_INBOX, INSERT_INBOX } from "./postgres-inbox-queries.js";
import { toHuman, type HumanRow } from "./postgres-rows.js";
import { WriteSession } from "./postgres-write.js";

/** The {@link HumanRequestStore} part of {@link PostgresStore}: questions for people, and their answers. */
export class PostgresHumanRequests implements HumanRequestStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.getHumanRequest}. */
  async getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    const [row] = await this.db.query<HumanRow>(GET_HUMAN, [requestId]);
    return row && toHuman(row);
  }

  /** See {@link Store.listHumanRequests}. */
  async listHumanRequests(query: ListHumanRequestsQuery): Promise<HumanRequest[]> {
    const { text, values } = listHumanQuery(query, pageLimit(query.limit, 1000));
    return (await this.db.query<HumanRow>(text, values)).map(toHuman);
  }

  /** See {@link Store.answerHuman}. */
  async answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void> {
    await this.db.tx(now, async (tx) => {
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
}
