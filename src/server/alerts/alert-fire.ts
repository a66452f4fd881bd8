/**
 * Firing an alert, once: each alert is a run of the reserved workflow `cairn.alert` whose id is
 * derived from the breach (rule and window, run or request), so the store's unique run id is the
 * deduplication. The evaluator creates that run already claimed by itself, then commits its
 * `outbox.emitted` entry (which inserts the outbox message in the same transaction) and its
 * `run.completed`. A second evaluator, or the same one after a restart, finds the run and fires
 * nothing. If an evaluator dies between the two writes, the run's lease expires and the next
 * evaluation claims it and finishes it. No worker runs `cairn.alert`: only evaluators claim it.
 */
import { createHash } from "node:crypto";
import { ALERT_TOPIC, type AlertPayload } from "../../core/alert-schemas.js";
import { newEntry } from "../../core/journal.js";
import { NO_CONTROL_CHARACTERS } from "../../core/schemas.js";
import { outboxMessageId } from "../../core/outbox.js";
import type { RunRecord } from "../../core/run.js";
import { decode, encode } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";

/** The reserved workflow name of alert runs. */
export const ALERT_WORKFLOW = "cairn.alert";
/** Its version. */
export const ALERT_WORKFLOW_VERSION = "1";
/** The op key of an alert run's one emit: its message id is `<runId>:alert#0`. */
export const ALERT_OP_KEY = "alert#0";
/** How long an evaluator holds an alert run between creating and finishing it. */
const LEASE_MS = 60_000;

/** The store slices firing needs. */
export type AlertFireStore = Pick<Store, "getRun" | "createRun" | "commit" | "claimRuns">;

/** The run id of an alert: `cairn.alert/<alertId>`, hashed when the id would not make a valid run id. */
export function alertRunId(alertId: string): string {
  const plain = `${ALERT_WORKFLOW}/${alertId}`;
  if (plain.length <= 256 && NO_CONTROL_CHARACTERS.test(plain) && !/\s/.test(plain)) return plain;
  const rule = alertId.slice(0, alertId.indexOf("/"));
  return `${ALERT_WORKFLOW}/${rule}/${createHash("sha256").update(alertId).digest("hex").slice(0, 40)}`;
}

/** The outbox message id of an alert run. */
export function alertMessageId(runId: string): string {
  return outboxMessageId(runId, ALERT_OP_KEY);
}

/**
 * Fires `payload` unless its alert exists: true when this call created it (its outbox message is
 * then written), false when it had already fired (here or in another process).
 */
export async function fireAlert(store: AlertFireStore, payload: AlertPayload, evaluatorId: string, now: number): Promise<boolean> {
  const runId = alertRunId(payload.alertId);
  // Most breaches fired before: a read answers them without taking the store's write lock.
  if (await store.getRun(runId)) return false;
  const { run, created } = await store.createRun(
    {
      runId,
      workflow: ALERT_WORKFLOW,
      version: ALERT_WORKFLOW_VERSION,
      input: encode(payload),
      tags: { rule: payload.rule, kind: payload.kind },
      claimFor: { workerId: evaluatorId, leaseMs: LEASE_MS },
    },
    now,
  );
  if (!created) return false;
  await finishAlert(store, run, payload, now);
  return true;
}

/**
 * Finishes alert runs an evaluator created but did not finish (it died in between): claims those
 * whose lease expired and writes their message. Returns how many it finished.
 */
export async function recoverAlerts(store: AlertFireStore, evaluatorId: string, now: number): Promise<number> {
  const runs = await store.claimRuns({
    workerId: evaluatorId,
    now,
    leaseMs: LEASE_MS,
    limit: 50,
    workflows: [{ name: ALERT_WORKFLOW, version: ALERT_WORKFLOW_VERSION }],
  });
  for (const run of runs) await finishAlert(store, run, decode<AlertPayload>(run.input), now);
  return runs.length;
}

async function finishAlert(store: AlertFireStore, run: RunRecord, payload: AlertPayload, now: number): Promise<void> {
  const messageId = alertMessageId(run.runId);
  const [result] = await store.commit(
    [
      {
        runId: run.runId,
        epoch: run.leaseEpoch,
        entries: [
          newEntry("outbox.emitted", ALERT_OP_KEY, { topic: ALERT_TOPIC, payload, messageId }),
          newEntry("run.completed", null, { output: { messageId } }),
        ],
      },
    ],
    now,
  );
  // Lost to another evaluator that took the run over: that one writes the message.
  if (result && !result.ok && result.reason !== "lease-lost" && result.reason !== "finished")
    throw new Error(`Alert run ${run.runId} could not be finished: ${result.reason}.`);
}
