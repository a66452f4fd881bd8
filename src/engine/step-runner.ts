import { StepFailedError, StepTimeoutError } from "../core/errors.js";
import { newEntry, type EntryData, type HumanAnswer, type NewEntry } from "../core/journal.js";
import { decode, decodeKeepingSecrets, encode, serializeError } from "../core/serialize.js";
import { journaledValue } from "./journaled-value.js";
import { crashPoint } from "./crash-points.js";
import { releaseStepSlots, takeStepSlots } from "./step-slots.js";
import type { StepFlowLimit } from "../core/step-flow.js";
import type { DecodedEntry, OpExecution, OpExecution as Execution } from "./execution-types.js";
import { backoffDelay, isNonRetryable, retryAfterOf, type ResolvedRetryPolicy } from "./retry-policy.js";
import type { StepInfo, StepOptions } from "./workflow.js";

/** Retry back-off up to this long waits in process; longer back-off is a durable timer. */
const IN_PROCESS_BACKOFF_MS = 1_000;

type Attempt = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Runs one step op to its outcome: recovers an unconfirmed intent per the step's
 * `effect`, then attempts with retries. Every attempt's intent is durable before
 * `fn` runs; every outcome is durable before it is delivered.
 */
export async function runStep<T>(
  execution: Execution,
  key: string,
  fn: (info: StepInfo) => Promise<T> | T,
  options: StepOptions<T>,
  policy: ResolvedRetryPolicy,
  timeoutMs: number | undefined,
  limits: readonly StepFlowLimit[] = [],
): Promise<void> {
  const host = execution.hostRef;
  const idempotencyKey = `${execution.runId}:${key}`;
  const { entries, retried } = execution.stepHistory(key);
  const last = entries.at(-1);
  let attempt = lastAttempt(entries);
  let budgetBase = retried ? attempt : 0;
  let prefix: NewEntry[] = [];

  if (last) {
    switch (last.kind) {
      case "step.started":
      case "human.requested":
      case "human.answered": {
        const next = await recover(execution, key, options, idempotencyKey, attempt, entries);
        if (next === "stop") return;
        prefix = next;
        break;
      }
      case "step.reconciled":
        break; // reconciled as "rerun" and crashed before the next intent
      case "step.failed": {
        const data = last.data as EntryData["step.failed"];
        if (!data.final && data.retryAt !== undefined && data.retryAt > host.clock()) {
          execution.block({ kind: "retry", opKey: key, wakeAt: data.retryAt });
          return;
        }
        if (data.final) budgetBase = attempt;
        break;
      }
    }
  }

  const unconfirmed = countReruns(entries) + countReruns(prefix);
  for (;;) {
    if (execution.isDraining || execution.isEnded) return;
    if (!(await takeStepSlots(execution, key, limits))) return;
    attempt += 1;
    crashPoint("before-intent", key);
    const intent: EntryData["step.started"] = prefix.length > 0 ? { attempt, recovered: true } : { attempt };
    if (options.intent !== undefined) intent.intent = options.intent;
    if (execution.saga.flagsFor(key)?.compensable) intent.compensable = true;
    await execution.write([...prefix, newEntry("step.started", key, intent)]);
    prefix = [];
    crashPoint("after-intent", key);
    let result: Attempt;
    try {
      result = await runAttempt(execution, key, fn, { idempotencyKey, attempt, timeoutMs, unconfirmed });
    } finally {
      await releaseStepSlots(execution, key, limits);
    }
    if (execution.isEnded) return;
    crashPoint("after-effect", key);
    if (result.ok) {
      const flags = execution.saga.flagsFor(key);
      let outcome: ReturnType<typeof journaledValue>;
      try {
        outcome = journaledValue(
          "step.completed",
          key,
          flagged(searchable({ result: result.value, attempt }, options, result.value as T), flags),
          (copy) => copy.result,
          host.maxPayloadBytes,
          `The result of step "${key}"`,
        );
      } catch (error) {
        await fail(execution, key, attempt, error);
        return;
      }
      crashPoint("before-outcome", key);
      execution.commitOutcome(key, [outcome.entry], { ok: true, value: outcome.value }, () => crashPoint("after-outcome", key));
      if (flags) execution.saga.noteCompleted(key, { ...(outcome.entry.data as EntryData["step.completed"]), result: outcome.value });
      return;
    }
    if (isNonRetryable(result.error, policy) || attempt - budgetBase >= policy.maxAttempts) {
      await fail(execution, key, attempt, result.error);
      return;
    }
    const delay = Math.max(backoffDelay(policy, attempt - budgetBase), retryAfterOf(result.error, policy));
    const retryAt = host.clock() + delay;
    await execution.write([newEntry("step.failed", key, { attempt, error: serializeError(result.error), final: false, retryAt })]);
    if (delay > IN_PROCESS_BACKOFF_MS) {
      execution.block({ kind: "retry", opKey: key, wakeAt: retryAt });
      return;
    }
    await waitUnlessStopped(execution, delay);
  }
}

/** Marks an outcome that registers a compensation or a resource (engine/saga.ts); untouched otherwise. */
function flagged(data: EntryData["step.completed"], flags: ReturnType<OpExecution["saga"]["flagsFor"]>): EntryData["step.completed"] {
  return flags ? Object.assign(data, flags) : data;
}

/** Adds the step's search text to its outcome; a searchText function that throws indexes nothing. */
function searchable<T>(data: EntryData["step.completed"], options: StepOptions<T>, value: T): EntryData["step.completed"] {
  if (options.secret) data.secret = true;
  if (!options.searchText) return data;
  try {
    const text = options.searchText(value);
    if (typeof text === "string" && text.length > 0) data.text = text.slice(0, 100_000);
  } catch {
    // Indexing is best effort: the step's outcome matters, its text does not.
  }
  return data;
}

async function fail(execution: Execution, key: string, attempt: number, error: unknown): Promise<void> {
  const serialized = serializeError(error);
  serialized.opKey = key;
  crashPoint("before-outcome", key);
  execution.commitOutcome(key, [newEntry("step.failed", key, { attempt, error: serialized, final: true })], {
    ok: false,
    error: new StepFailedError(key, serialized, attempt),
  });
}

/** Interrupted attempts of a step: each one was recovered as "rerun" (by its effect, `reconcile`, compensation or a person). */
function countReruns(entries: readonly { kind: string; data: unknown }[]): number {
  return entries.filter((entry) => entry.kind === "step.reconciled" && (entry.data as EntryData["step.reconciled"]).action === "rerun").length;
}

function lastAttempt(entries: DecodedEntry[]): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.kind === "step.started" || entry.kind === "step.failed") return (entry.data as { attempt: number }).attempt;
  }
  return 0;
}

async function runAttempt<T>(
  execution: Execution,
  key: string,
  fn: (info: StepInfo) => Promise<T> | T,
  { idempotencyKey, attempt, timeoutMs, unconfirmed }: { idempotencyKey: string; attempt: number; timeoutMs: number | undefined; unconfirmed: number },
): Promise<Attempt> {
  // Only an attempt with its own timeout needs its own signal; otherwise the execution's signal
  // (aborted on cancel, lease loss or a hard stop) is the attempt's, which saves a controller per step,
  // and is made only if the step's function reads it (Execution.signal).
  const controller = timeoutMs === undefined ? undefined : new AbortController();
  const stopForwarding = controller && !execution.abortState ? execution.onAbort((reason) => controller.abort(reason)) : undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopRacing: (() => void) | undefined;
  try {
    const host = execution.hostRef;
    const info: StepInfo = {
      idempotencyKey,
      attempt,
      unconfirmed,
      get signal() {
        return controller ? controller.signal : execution.signal;
      },
      heartbeat: () => host.heartbeat(execution.runId),
      progress: (data) => host.progress(execution.runId, key, attempt, data),
    };
    const racers: Promise<unknown>[] = [Promise.resolve().then(() => host.aroundStep(execution.runId, key, attempt, () => fn(info)))];
    if (controller && timeoutMs !== undefined) {
      racers.push(
        new Promise((_, reject) => {
          timer = setTimeout(() => {
            const error = new StepTimeoutError(key, timeoutMs);
            controller.abort(error);
            reject(error);
          }, timeoutMs);
        }),
      );
    }
    // An aborted attempt settles at once, even if the step's function ignores its signal.
    racers.push(
      new Promise((_, reject) => {
        if (controller) {
          const signal = controller.signal;
          if (signal.aborted) return reject(signal.reason);
          const onAbort = () => reject(signal.reason);
          signal.addEventListener("abort", onAbort, { once: true });
          stopRacing = () => signal.removeEventListener("abort", onAbort);
          return;
        }
        const aborted = execution.abortState;
        if (aborted) return reject(aborted.reason);
        stopRacing = execution.onAbort(reject);
      }),
    );
    return { ok: true, value: await Promise.race(racers) };
  } catch (error) {
    return { ok: false, error };
  } finally {
    if (timer) clearTimeout(timer);
    stopRacing?.();
    stopForwarding?.();
  }
}

function waitUnlessStopped(execution: Execution, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    const signal = execution.signal;
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * An intent without an outcome: the worker died (or lost its lease) while the step ran.
 * Returns entries to journal with the next intent, or "stop" when the step is settled or waits.
 */
async function recover<T>(
  execution: Execution,
  key: string,
  options: StepOptions<T>,
  idempotencyKey: string,
  attempt: number,
  entries: DecodedEntry[],
): Promise<NewEntry[] | "stop"> {
  const effect = options.effect ?? "idempotent";
  const last = entries.at(-1)!;
  if (last.kind === "step.started" && options.reconcile) {
    const verdict = await options.reconcile(idempotencyKey);
    if (verdict.done) {
      const encoded = encode(verdict.value);
      const completed = newEntry("step.completed", key, {
        result: decode(encoded),
        attempt,
        via: "reconcile",
        ...(options.secret ? { secret: true as const } : {}),
        ...execution.saga.flagsFor(key),
      });
      const registers = completed.data.compensable === true || completed.data.resource === true;
      execution.commitOutcome(key, [newEntry("step.reconciled", key, { action: "completed", via: "reconcile", attempt }), completed], {
        ok: true,
        value: decode(encoded),
      });
      if (registers) execution.saga.noteCompleted(key, { ...completed.data, result: decode(encoded) });
      return "stop";
    }
    return [newEntry("step.reconciled", key, { action: "rerun", via: "reconcile", attempt })];
  }
  switch (effect) {
    case "none":
    case "idempotent":
      return [newEntry("step.reconciled", key, { action: "rerun", via: "effect", attempt })];
    case "reversible":
      await options.compensate?.(undefined, { idempotencyKey });
      return [newEntry("step.reconciled", key, { action: "rerun", via: "compensate", attempt })];
    case "unsafe":
      return askWhetherItHappened(execution, key, attempt, entries, options);
  }
}

async function askWhetherItHappened<T>(
  execution: Execution,
  key: string,
  attempt: number,
  entries: DecodedEntry[],
  options: StepOptions<T>,
): Promise<NewEntry[] | "stop"> {
  const requestId = `${execution.runId}:${key}:${attempt}`;
  const requested = entries.find((e) => e.kind === "human.requested" && (e.data as EntryData["human.requested"]).requestId === requestId);
  if (!requested) {
    const data: EntryData["human.requested"] = {
      requestId,
      question: `Step "${key}" of run "${execution.runId}" was interrupted after attempt ${attempt} started, and its effect is marked unsafe to repeat. Did it happen?`,
      options: ["retry", "skip", "fail"],
      timeoutAt: null,
    };
    // decodeKeepingSecrets: secret() values in the context keep their marks, so views redact them.
    if (options.recoveryContext !== undefined) data.context = decodeKeepingSecrets(encode(options.recoveryContext));
    if (options.resultSchema !== undefined) data.input = options.resultSchema;
    await execution.write([newEntry("human.requested", key, data)]);
  }
  const answered = entries.find((e) => e.kind === "human.answered" && (e.data as EntryData["human.answered"]).requestId === requestId);
  let answer = answered ? (answered.data as EntryData["human.answered"]).answer : undefined;
  if (!answer) {
    const event = await execution.takeEvent(`human:${requestId}`);
    if (!event) {
      execution.block({ kind: "human", opKey: key, requestId, timeoutAt: null });
      return "stop";
    }
    answer = decode<HumanAnswer>(event.payload);
    await execution.write([newEntry("human.answered", key, { requestId, answer, inboxId: event.id })]);
  }
  switch (answer.action) {
    case "skip": {
      const encoded = encode(answer.value);
      execution.commitOutcome(
        key,
        [
          newEntry("step.reconciled", key, { action: "completed", via: "human", attempt }),
          newEntry("step.completed", key, { result: decode(encoded), attempt, via: "human" }),
        ],
        { ok: true, value: decode(encoded) },
      );
      return "stop";
    }
    case "fail": {
      const error = { name: "StepAbandonedError", message: answer.message ?? `A person marked step "${key}" as failed.`, nonRetryable: true, opKey: key };
      execution.commitOutcome(
        key,
        [newEntry("step.reconciled", key, { action: "failed", via: "human", attempt }), newEntry("step.failed", key, { attempt, error, final: true })],
        { ok: false, error: new StepFailedError(key, error, attempt) },
      );
      return "stop";
    }
    default:
      return [newEntry("step.reconciled", key, { action: "rerun", via: "human", attempt })];
  }
}
