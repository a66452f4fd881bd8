import { z } from "zod";
import { toMs } from "../core/duration.js";
import { RunCancelledError, TimeoutError, ValidationError } from "../core/errors.js";
import { checkTopic } from "../core/outbox.js";
import { describeIssues } from "../core/schemas.js";
import { newEntry, type EntryData, type HumanAnswer } from "../core/journal.js";
import { decode, decodeKeepingSecrets, encode } from "../core/serialize.js";
import { crashPoint } from "./crash-points.js";
import type { OpExecution, Outcome } from "./execution-types.js";
import type { AskHumanRequest, HumanEscalation, HumanNoticePayload, HumanReply } from "./workflow.js";

/** A request checked at the call, before anything is journaled. */
export interface CheckedAskHuman {
  question: string;
  options: string[];
  context: unknown;
  /** The answer value's JSON Schema, when the request has an `input` schema. */
  input: Record<string, unknown> | undefined;
  /** The `input` zod schema itself: the worker checks answers with it (refinements, transforms and all). */
  schema: z.ZodType | undefined;
  timeoutMs: number | undefined;
  /** The final escalation, after `extensions` extensions of `extendMs` each. */
  escalation: HumanEscalation;
  extendMs: number;
  extensions: number;
  /** Answers are secret (`askHuman({ secret: true })`). */
  secret: boolean;
  /** Answers that need a note: all (`true`) or those choosing these options. */
  requireNote: true | string[] | undefined;
  /** `notify`: the outbox topics of an extension and of the final escalation, and the data sent along. */
  notify: { extended: string; timedOut: string; data: unknown } | undefined;
}

const notifySchema = z.union([z.boolean(), z.object({ topic: z.string().optional(), data: z.unknown().optional() }).strict()]);

function checkNotify(where: string, notify: unknown, timeoutMs: number | undefined): CheckedAskHuman["notify"] {
  const parsed = notifySchema.safeParse(notify);
  if (!parsed.success) throw new ValidationError(`${where}: notify must be true, false or { topic?, data? } (${describeIssues(parsed.error)}).`);
  const value = parsed.data;
  if (value === false) return undefined;
  if (timeoutMs === undefined) throw new ValidationError(`${where}: notify needs a timeout: it tells someone when nobody answered in time.`);
  if (value === true) return { extended: "human.escalated", timedOut: "human.timedout", data: undefined };
  const topic = value.topic === undefined ? undefined : checkTopic(value.topic, `${where}: notify.topic`);
  let data: unknown;
  try {
    data = value.data === undefined ? undefined : decode(encode(value.data));
  } catch (error) {
    throw new ValidationError(`${where}: notify.data must be plain data the journal can hold (${(error as Error).message}).`);
  }
  return { extended: topic ?? "human.escalated", timedOut: topic ?? "human.timedout", data };
}

/** Validates `ctx.askHuman`'s argument; throws ValidationError naming what is wrong. */
export function checkAskHuman(request: AskHumanRequest): CheckedAskHuman {
  if (!request || typeof request.question !== "string" || request.question.trim() === "") {
    throw new ValidationError("ctx.askHuman needs a non-empty `question`.");
  }
  const where = `ctx.askHuman("${request.question}")`;
  const options = request.options ?? [];
  if (!Array.isArray(options) || options.some((o) => typeof o !== "string" || o === "") || new Set(options).size !== options.length) {
    throw new ValidationError(`${where}: options must be distinct non-empty strings.`);
  }
  const onTimeout = request.onTimeout ?? "fail";
  let escalation: HumanEscalation = "fail";
  let extendMs = 0;
  let extensions = 0;
  if (typeof onTimeout === "object" && onTimeout !== null && "extend" in onTimeout) {
    extendMs = toMs(onTimeout.extend);
    extensions = onTimeout.times ?? 1;
    if (!Number.isSafeInteger(extensions) || extensions < 1) throw new ValidationError(`${where}: onTimeout.times must be a whole number ≥ 1.`);
    escalation = onTimeout.then ?? "fail";
  } else {
    escalation = onTimeout as HumanEscalation;
  }
  const isChoice = typeof escalation === "object" && escalation !== null && typeof escalation.option === "string";
  if (
    escalation !== "fail" &&
    escalation !== "cancel" &&
    !(isChoice && (options.length === 0 || options.includes((escalation as { option: string }).option)))
  ) {
    throw new ValidationError(
      `${where}: onTimeout must be "fail", "cancel", { option } with one of the options (${options.join(", ")}), or { extend, times?, then? }.`,
    );
  }
  let input: Record<string, unknown> | undefined;
  if (request.input !== undefined) {
    if (!(request.input instanceof z.ZodType)) throw new ValidationError(`${where}: input must be a zod schema.`);
    try {
      input = z.toJSONSchema(request.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    } catch (error) {
      throw new ValidationError(`${where}: the input schema has no JSON Schema form (${(error as Error).message}).`);
    }
  }
  const timeoutMs = request.timeout === undefined ? undefined : toMs(request.timeout);
  const requireNote = request.requireNote;
  if (requireNote !== undefined && typeof requireNote !== "boolean") {
    if (!Array.isArray(requireNote) || requireNote.some((o) => typeof o !== "string" || !options.includes(o)))
      throw new ValidationError(`${where}: requireNote must be true, false or a list of the options (${options.join(", ")}) whose answers need a note.`);
  }
  return {
    question: request.question,
    options,
    context: request.context,
    input,
    schema: request.input,
    timeoutMs,
    notify: request.notify === undefined ? undefined : checkNotify(where, request.notify, timeoutMs),
    escalation,
    extendMs,
    extensions,
    secret: request.secret === true,
    requireNote: requireNote === true ? true : Array.isArray(requireNote) && requireNote.length > 0 ? [...requireNote] : undefined,
  };
}

/** The reply an answered or timed-out request delivers, the same live and on replay. */
export function replyOutcome(runId: string, key: string, kind: "human.answered" | "human.timedout", data: unknown): Outcome {
  if (kind === "human.answered") {
    const { requestId, answer, parsed } = data as EntryData["human.answered"];
    const reply: HumanReply = {
      requestId,
      option: answer.option ?? null,
      value: "parsed" in (data as object) ? parsed : answer.value,
      by: answer.by ?? null,
      message: answer.message ?? null,
      timedOut: false,
    };
    return { ok: true, value: reply };
  }
  const timedOut = data as EntryData["human.timedout"];
  if (timedOut.escalation === "fail") return { ok: false, error: new TimeoutError(key, `an answer to human request "${timedOut.requestId}"`) };
  if (timedOut.escalation === "cancel")
    return { ok: false, error: new RunCancelledError(runId, `nobody answered human request "${timedOut.requestId}" in time`) };
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
 * Checks an answer's value against the request's input schema (journaled as JSON Schema).
 * @throws ValidationError naming what does not match.
 */
export function checkAnswerValue(requestId: string, schema: Record<string, unknown>, value: unknown): void {
  let parsed: z.ZodType;
  try {
    parsed = z.fromJSONSchema(schema as never) as z.ZodType;
  } catch {
    return; // a schema zod cannot read back is not checked here; the workflow sees the value as given
  }
  const result = parsed.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "value"}: ${i.message}`).join("; ");
    throw new ValidationError(`The answer to human request "${requestId}" does not match its input schema: ${issues}.`);
  }
}

/**
 * Runs one askHuman op: journals the request (once), then takes the answer from the run's inbox
 * (event `human:<requestId>`, put there by `Store.answerHuman`), extends or escalates when the time
 * is up, or blocks until one of them can happen.
 */
export async function runAskHuman(execution: OpExecution, key: string, request: CheckedAskHuman): Promise<void> {
  const host = execution.hostRef;
  const entries = execution.stepHistory(key).entries;
  // An answer the input schema refused re-asks: the op's newest request is the open one.
  const asked = entries.filter((e) => e.kind === "human.requested").map((e) => e.data as EntryData["human.requested"]);
  const requested = asked.at(-1);
  const requestId = requested?.requestId ?? `${execution.runId}:${key}`;
  const extended = entries
    .filter((e) => e.kind === "human.extended")
    .map((e) => e.data as EntryData["human.extended"])
    .filter((e) => e.requestId === requestId);
  let timeoutAt = extended.at(-1)?.timeoutAt ?? (requested ? requested.timeoutAt : null);
  if (!requested) {
    timeoutAt = request.timeoutMs === undefined ? null : host.clock() + request.timeoutMs;
    await execution.write([newEntry("human.requested", key, requestData(requestId, request, timeoutAt))]);
  }
  const event = await execution.takeEvent(`human:${requestId}`);
  if (event) {
    const answer = decode<HumanAnswer>(event.payload);
    const checked = await checkWithSchema(request, answer);
    if (!checked.ok) {
      // Journaled (the answer is consumed and kept, not delivered), then asked again with the reason.
      const again = `${execution.runId}:${key}:${asked.length + 1}`;
      const retry: EntryData["human.requested"] = {
        ...requestData(again, request, timeoutAt === null || request.timeoutMs === undefined ? timeoutAt : host.clock() + request.timeoutMs),
        refused: { requestId, message: checked.message },
      };
      await execution.write([
        newEntry("human.answered", key, { requestId, answer, inboxId: event.id, refused: checked.message }),
        newEntry("human.requested", key, retry),
      ]);
      execution.block({ kind: "human", opKey: key, requestId: again, timeoutAt: retry.timeoutAt });
      return;
    }
    const data: EntryData["human.answered"] = { requestId, answer, inboxId: event.id, reply: true };
    if (checked.transformed) data.parsed = checked.value;
    const entry = newEntry("human.answered", key, data);
    crashPoint("before-consume", key);
    execution.commitOutcome(key, [entry], replyOutcome(execution.runId, key, "human.answered", entry.data), () => crashPoint("after-consume", key));
    return;
  }
  if (timeoutAt !== null && timeoutAt <= host.clock()) {
    if (extended.length < request.extensions) {
      // More time: the deadline moves (the request shows it), and the op waits again.
      const next = host.clock() + request.extendMs;
      const extension = extended.length + 1;
      const data: EntryData["human.extended"] = { requestId, timeoutAt: next, extension };
      if (request.notify) {
        const payload = notice(execution.runId, requestId, request, { event: "extended", extension, timeoutAt: next });
        data.notify = { topic: request.notify.extended, messageId: `${requestId}:extended:${extension}`, payload };
      }
      await execution.write([newEntry("human.extended", key, data)]);
      execution.block({ kind: "human", opKey: key, requestId, timeoutAt: next });
      return;
    }
    const escalation = request.escalation;
    const data: EntryData["human.timedout"] =
      escalation === "fail" || escalation === "cancel"
        ? { requestId, escalation }
        : { requestId, escalation: "choose", option: escalation.option, value: decode(encode(escalation.value)) };
    if (request.notify) {
      const payload = notice(execution.runId, requestId, request, {
        event: "timedout",
        escalation: data.escalation,
        ...(data.option === undefined ? {} : { option: data.option }),
      });
      data.notify = { topic: request.notify.timedOut, messageId: `${requestId}:timedout`, payload };
    }
    execution.commitOutcome(key, [newEntry("human.timedout", key, data)], replyOutcome(execution.runId, key, "human.timedout", data));
    return;
  }
  execution.block({ kind: "human", opKey: key, requestId, timeoutAt });
}

/** The `human.requested` entry of a request (or of its re-ask after a refused answer). */
function requestData(requestId: string, request: CheckedAskHuman, timeoutAt: number | null): EntryData["human.requested"] {
  const data: EntryData["human.requested"] = { requestId, question: request.question, options: request.options, timeoutAt };
  // decodeKeepingSecrets: a context with secret() values keeps their marks, so views redact them.
  if (request.context !== undefined) data.context = decodeKeepingSecrets(encode(request.context));
  if (request.secret) data.secret = true;
  if (request.input !== undefined) data.input = request.input;
  if (request.requireNote !== undefined) data.requireNote = request.requireNote;
  return data;
}

type Checked = { ok: true; transformed: boolean; value: unknown } | { ok: false; message: string };

/**
 * Checks an answer's value with the request's zod schema itself, in the worker that asked: what the
 * server's JSON Schema check cannot see (refine, superRefine, custom, date, bigint) is enforced here,
 * and transforms apply. Answers that are not `action: "answer"` carry no value to check.
 */
async function checkWithSchema(request: CheckedAskHuman, answer: HumanAnswer): Promise<Checked> {
  if (!request.schema || answer.action !== "answer") return { ok: true, transformed: false, value: answer.value };
  let result: Awaited<ReturnType<z.ZodType["safeParseAsync"]>>;
  try {
    result = await request.schema.safeParseAsync(answer.value);
  } catch (error) {
    return { ok: false, message: `the input schema threw: ${(error as Error).message}` };
  }
  if (!result.success) {
    return { ok: false, message: result.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "value"}: ${i.message}`).join("; ") };
  }
  let same = false;
  try {
    same = encode(result.data) === encode(answer.value);
  } catch {
    return { ok: false, message: "the input schema's output cannot be stored in the journal (return plain data, Date, Map, Set or bigint)" };
  }
  return { ok: true, transformed: !same, value: result.data };
}

function notice(
  runId: string,
  requestId: string,
  request: CheckedAskHuman,
  what: Pick<HumanNoticePayload, "event" | "extension" | "timeoutAt" | "escalation" | "option">,
): HumanNoticePayload {
  const payload: HumanNoticePayload = { ...what, requestId, runId, question: request.question, options: request.options };
  if (request.notify?.data !== undefined) payload.data = request.notify.data;
  return payload;
}
