import { decode } from "../core/serialize.js";
import { decodeOr } from "../core/unreadable.js";
import type { RequestDetails } from "./human-input.js";
import type { HumanRequest, WorkerRecord } from "../core/store.js";
import type { HumanAnswer } from "../core/journal.js";

/** Store records as the API shows them: epoch ms become Dates (ISO strings in JSON), payloads decoded. */

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

/** `details`: the JSON Schema the answer's value must match and the refusal it re-asks after (see `requestDetails`). */
export function humanRequestView(request: HumanRequest, details: RequestDetails = {}) {
  let unreadable = request.unreadable;
  const where = `human request "${request.requestId}"`;
  const note = (message: string) => (unreadable ??= message);
  const view = {
    requestId: request.requestId,
    runId: request.runId,
    opKey: request.opKey,
    question: request.question,
    options: request.options,
    status: request.status,
    answer: request.answer === null ? null : decodeOr(() => decode<HumanAnswer>(request.answer), null, where, note),
    timeoutAt: date(request.timeoutAt),
    createdAt: new Date(request.createdAt),
    answeredAt: date(request.answeredAt),
    closedReason: request.closedReason ?? null,
    context: request.context === undefined ? null : decodeOr(() => decode(request.context), null, where, note),
    input: details.input ?? null,
    refused: details.refused ?? null,
    requireNote: details.requireNote ?? null,
  };
  return unreadable === undefined ? view : { ...view, unreadable };
}

export function workerView(worker: WorkerRecord) {
  return { ...worker, startedAt: new Date(worker.startedAt), heartbeatAt: new Date(worker.heartbeatAt) };
}
