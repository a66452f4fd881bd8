import { HumanRequestClosedError, HumanRequestNotFoundError, ValidationError, isCairnError } from "../core/errors.js";
import { listHumanRequestsOptionsSchema } from "../core/api-schemas.js";
import type { HumanAnswer } from "../core/journal.js";
import { humanAnswerSchema, requestIdSchema } from "../core/schemas.js";
import { decode, encode } from "../core/serialize.js";
import type { HumanRequest, HumanRequestStore, Store } from "../core/store.js";
import { decodeCursor, encodeCursor } from "../store/common/list-query.js";
import { checkAnswerValue } from "./ask-human.js";
import { check } from "./check-input.js";
import type { ListHumanRequestsOptions } from "./engine.js";
import type { ObserverHub } from "./observer-hub.js";
import { unreadableHuman, type RunViews } from "./run-views.js";

/** What answering and listing human requests need from the engine. */
export interface HumanRequestsDeps {
  store: HumanRequestStore & Pick<Store, "readJournalForResume" | "getRun">;
  clock: () => number;
  views: RunViews;
  observers: ObserverHub;
  /** An answer arrived for the run: wake it. */
  notify(runId: string): void;
}

/** Questions for people (`ctx.askHuman`, unsafe-step recovery): answering them and listing them. */
export class HumanRequests {
  constructor(private readonly deps: HumanRequestsDeps) {}

  async respond(requestId: string, answer: HumanAnswer): Promise<{ answer: HumanAnswer; duplicate: boolean }> {
    const { store } = this.deps;
    check(requestIdSchema, requestId, "respondToHuman: requestId");
    const parsed = check(humanAnswerSchema, answer, "respondToHuman: answer") as HumanAnswer;
    const request = await store.getHumanRequest(requestId);
    if (!request) throw new HumanRequestNotFoundError(requestId);
    // Answering twice is a no-op that returns the first answer.
    if (request.status === "answered" && request.answer !== null) return { answer: decode<HumanAnswer>(request.answer), duplicate: true };
    if (request.status === "closed") throw new HumanRequestClosedError(requestId, request.closedReason ?? "finished");
    try {
      encode(parsed);
    } catch (error) {
      // e.g. a value nested thousands of levels deep: refused like a start or event payload, nothing written.
      throw new ValidationError(`respondToHuman: the answer to "${requestId}" cannot be stored: ${(error as Error).message}`);
    }
    checkAnswerFits(request, parsed);
    if (parsed.action === "answer" || parsed.action === "skip") await this.checkAnswerInput(request, parsed);
    const now = this.deps.clock();
    try {
      await store.answerHuman(requestId, parsed, now);
    } catch (error) {
      if (!isCairnError(error, "HUMAN_REQUEST_ANSWERED")) throw error;
      // Someone else answered between the read and the write: theirs stands.
      const first = await store.getHumanRequest(requestId);
      if (first?.answer) return { answer: decode<HumanAnswer>(first.answer), duplicate: true };
      throw error;
    }
    this.deps.notify(request.runId);
    const { observers } = this.deps;
    if (observers.active) {
      // One read more, only when someone observes: the metrics count human wait by workflow.
      // The answer is stored already: a failed read leaves the label empty rather than failing the call.
      const workflow = (await store.getRun(request.runId).catch(() => undefined))?.workflow ?? "";
      observers.report({ type: "human-answered", runId: request.runId, workflow, requestId, waitMs: Math.max(0, now - request.createdAt) });
    }
    return { answer: parsed, duplicate: false };
  }

  /** An answer's value must match the input schema the request was asked with (journaled with it). */
  private async checkAnswerInput(request: HumanRequest, answer: HumanAnswer): Promise<void> {
    // A pending request's op has not finished, so its entry is never superseded by a loop checkpoint.
    const journal = await this.deps.store.readJournalForResume(request.runId);
    for (const entry of journal) {
      if (entry.kind !== "human.requested" || entry.opKey !== request.opKey) continue;
      const data = decode<{ requestId: string; input?: Record<string, unknown>; requireNote?: true | string[] }>(entry.payload);
      if (data.requestId !== request.requestId) continue;
      const needsNote =
        data.requireNote === true || (Array.isArray(data.requireNote) && answer.option !== undefined && data.requireNote.includes(answer.option));
      if (answer.action === "answer" && needsNote && !answer.message?.trim())
        throw new ValidationError(
          `Human request "${request.requestId}": ${answer.option === undefined ? "an answer" : `the option "${answer.option}"`} needs a note: give one ("message" in the API, --message in the CLI).`,
        );
      if (!data.input) continue;
      // A step that declares its result's schema cannot be skipped without the result it would have returned.
      if (answer.action === "skip" && answer.value === undefined)
        throw new ValidationError(
          `Human request "${request.requestId}": skip means "it happened", so give the result it returned (--value '<json>' in the CLI, "value" in the API); the run continues with that value. Answer retry or fail otherwise.`,
        );
      checkAnswerValue(request.requestId, data.input, answer.value);
    }
  }

  async listPage(options: ListHumanRequestsOptions): Promise<{ requests: HumanRequest[]; nextCursor?: string }> {
    const query = check(listHumanRequestsOptionsSchema, options, "listHumanRequests");
    const limit = query.limit ?? 1000;
    const order = query.order ?? (query.status === undefined || query.status === "pending" ? "asc" : "desc");
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, "start from the first request");
    const rows = await this.deps.store.listHumanRequests({
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(query.runId === undefined ? {} : { runId: query.runId }),
      ...(query.runIdPrefix === undefined ? {} : { runIdPrefix: query.runIdPrefix }),
      ...(cursor === undefined ? {} : { after: { createdAt: cursor.createdAt, requestId: cursor.runId } }),
      order,
      limit: limit + 1,
    });
    const requests = await Promise.all(
      rows.slice(0, limit).map((request) => this.deps.views.human(request).catch((error: unknown) => unreadableHuman(request, error))),
    );
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    return last ? { requests, nextCursor: encodeCursor({ createdAt: last.createdAt, runId: last.requestId }) } : { requests };
  }

  async get(requestId: string): Promise<HumanRequest | undefined> {
    const request = await this.deps.store.getHumanRequest(check(requestIdSchema, requestId, "getHumanRequest: requestId"));
    return request && this.deps.views.human(request);
  }
}

/** An answer must fit its request: one of its options, or its recovery actions. */
function checkAnswerFits(request: HumanRequest, answer: HumanAnswer): void {
  const recovery = request.options.length > 0 && request.options.every((option) => option === "retry" || option === "skip" || option === "fail");
  if (answer.action === "answer") {
    if (recovery) throw new ValidationError(`Human request "${request.requestId}" asks whether a step happened: answer retry, skip or fail.`);
    if (request.options.length > 0 && (answer.option === undefined || !request.options.includes(answer.option))) {
      throw new ValidationError(
        `Human request "${request.requestId}" takes one of these options: ${request.options.join(", ")} (got ${answer.option === undefined ? "none" : JSON.stringify(answer.option)}).`,
      );
    }
  } else if (!recovery) {
    throw new ValidationError(
      `Human request "${request.requestId}" was asked with ctx.askHuman: answer with action "answer"${request.options.length > 0 ? ` and an option (${request.options.join(", ")})` : ""}.`,
    );
  }
}
