import { HumanRequestAnsweredError, HumanRequestClosedError, HumanRequestNotFoundError, RunFinishedError } from "../../core/errors.js";
import type { HumanAnswer } from "../../core/journal.js";
import { isTerminal } from "../../core/run.js";
import { encode } from "../../core/serialize.js";
import type { HumanRequest, HumanRequestStore, ListHumanRequestsQuery } from "../../core/store.js";
import { compareText, pageLimit } from "../common/list-query.js";
import type { MemoryWriter } from "./memory-write.js";

/** The {@link HumanRequestStore} part of {@link MemoryStore}: questions for people, and their answers. */
export class MemoryHumanRequests implements HumanRequestStore {
  constructor(private readonly w: MemoryWriter) {}

  /** See {@link Store.getHumanRequest}. */
  async getHumanRequest(requestId: string): Promise<HumanRequest | undefined> {
    const request = this.w.t.humans.get(requestId);
    return request && copyHuman(request);
  }

  /** See {@link Store.listHumanRequests}. */
  async listHumanRequests(query: ListHumanRequestsQuery): Promise<HumanRequest[]> {
    const limit = pageLimit(query.limit, 1000);
    const sign = query.order === "desc" ? -1 : 1;
    const order = (a: Pick<HumanRequest, "createdAt" | "requestId">, b: Pick<HumanRequest, "createdAt" | "requestId">) =>
      sign * (a.createdAt - b.createdAt || compareText(a.requestId, b.requestId));
    const after = query.after;
    const matches = [...this.w.t.humans.values()].filter(
      (request) =>
        (query.status === undefined || request.status === query.status) &&
        (query.runId === undefined || request.runId === query.runId) &&
        (query.runIdPrefix === undefined || request.runId.startsWith(query.runIdPrefix)) &&
        (after === undefined || order(request, after) > 0),
    );
    matches.sort(order);
    return matches.slice(0, limit).map(copyHuman);
  }

  /** See {@link Store.answerHuman}. */
  async answerHuman(requestId: string, answer: HumanAnswer, now: number): Promise<void> {
    const t = this.w.t;
    t.atomic(() => {
      const request = t.humans.get(requestId);
      if (!request) throw new HumanRequestNotFoundError(requestId);
      if (request.status === "closed") throw new HumanRequestClosedError(requestId, request.closedReason ?? "finished");
      if (request.status === "answered" || t.findInbox(request.runId, requestId)) throw new HumanRequestAnsweredError(requestId);
      const run = this.w.mustGet(request.runId);
      if (isTerminal(run.status)) throw new RunFinishedError(run.runId, run.status, `answer human request "${requestId}"`);
      const payload = encode(answer);
      t.insertInbox({ runId: run.runId, type: `human:${requestId}`, eventId: requestId, payload, consumedSeq: null, receivedAt: now });
      t.putHuman({ ...request, status: "answered", answer: payload, answeredAt: now });
      this.w.wake(run.runId, now);
    });
  }
}

function copyHuman(request: HumanRequest): HumanRequest {
  return { ...request, options: [...request.options] };
}
