import { toMs } from "../core/duration.js";
import { TimeoutError, ValidationError } from "../core/errors.js";
import { newEntry, type EntryData, type HumanAnswer } from "../core/journal.js";
import { decode, encode } from "../core/serialize.js";
import { crashPoint } from "./crash-points.js";
import type { OpExecution, Outcome } from "./execution-types.js";
import type { AskHumanRequest, HumanReply } from "./workflow.js";

/** A request checked at the call, before anything is journaled. */
export interface CheckedAskHuman {
  question: string;
  options: string[];
  context: unknown;
  timeoutMs: number | undefined;
  onTimeout: "fail" | { option: string; value?: unknown };
}

/** Validates `ctx.askHuman`'s argument; throws ValidationError naming what is wrong. */
export function checkAskHuman(request: AskHumanRequest): CheckedAskHuman {
  if (!request || typeof request.question !== "string" || request.question.trim() === "") {
    throw new ValidationError("ctx.askHuman needs a non-empty `question`.");
  }
  const options = request.options ?? [];
  if (!Array.isArray(options) || options.some((o) => typeof o !== "string" || o === "") || new Set(options).size !== options.length) {
    throw new ValidationError(`ctx.askHuman("${request.question}"): options must be distinct non-empty strings.`);
  }
  const onTimeout = request.onTimeout ?? "fail";
  if (onTimeout !== "fail" && (typeof onTimeout !== "object" || (options.length > 0 && !options.includes(onTimeout.option)))) {
    throw new ValidationError(`ctx.askHuman("${request.question}"): onTimeout must be "fail" or { option } with one of the options (${options.join(", ")}).`);
  }
  return {
    question: request.question,
    options,
    context: request.context,
    timeoutMs: request.timeout === undefined ? undefined : toMs(request.timeout),
    onTimeout,
  };
}

/** The reply an answered or timed-out request delivers, the same live and on replay. */
export function replyOutcome(key: string, kind: "human.answered" | "human.timedout", data: unknown): Outcome {
  if (kind === "human.answered") {
    const { requestId, answer } = data as EntryData["human.answered"];
    const reply: HumanReply = {
      requestId,
      option: answer.option ?? null,
      value: answer.value,
      by: answer.by ?? null,
      message: answer.message ?? null,
      timedOut: false,
    };
    return { ok: true, value: reply };
  }
  const timedOut = data as EntryData["human.timedout"];
  if (timedOut.escalation === "fail") return { ok: false, error: new TimeoutError(key, `an answer to human request "${timedOut.requestId}"`) };
  const reply: HumanReply = {
    requestId: timedOut.requestId,
    option: timedOut.option ?? null,
    value: timedOut.value,
    by: "timeout",
    message: null,
    timedOut: true,
  };
  return { ok: true, value: reply };
}

/**
 * Runs one askHuman op: journals the request (once), then takes the answer from the run's inbox
 * (event `human:<requestId>`, put there by `Store.answerHuman`), escalates when the time is up, or
 * blocks until one of them can happen.
 */
export async function runAskHuman(execution: OpExecution, key: string, request: CheckedAskHuman): Promise<void> {
  const host = execution.hostRef;
  const requestId = `${execution.runId}:${key}`;
  const entries = execution.stepHistory(key).entries;
  const requested = entries.find((e) => e.kind === "human.requested")?.data as EntryData["human.requested"] | undefined;
  let timeoutAt = requested ? requested.timeoutAt : null;
  if (!requested) {
    timeoutAt = request.timeoutMs === undefined ? null : host.clock() + request.timeoutMs;
    const data: EntryData["human.requested"] = { requestId, question: request.question, options: request.options, timeoutAt };
    if (request.context !== undefined) data.context = decode(encode(request.context));
    await execution.write([newEntry("human.requested", key, data)]);
  }
  const event = await execution.takeEvent(`human:${requestId}`);
  if (event) {
    const answer = decode<HumanAnswer>(event.payload);
    const entry = newEntry("human.answered", key, { requestId, answer, inboxId: event.id, reply: true });
    crashPoint("before-consume", key);
    execution.commitOutcome(key, [entry], replyOutcome(key, "human.answered", entry.data), () => crashPoint("after-consume", key));
    return;
  }
  if (timeoutAt !== null && timeoutAt <= host.clock()) {
    const data: EntryData["human.timedout"] =
      request.onTimeout === "fail"
        ? { requestId, escalation: "fail" }
        : { requestId, escalation: "choose", option: request.onTimeout.option, value: decode(encode(request.onTimeout.value)) };
    execution.commitOutcome(key, [newEntry("human.timedout", key, data)], replyOutcome(key, "human.timedout", data));
    return;
  }
  execution.block({ kind: "human", opKey: key, requestId, timeoutAt });
}
