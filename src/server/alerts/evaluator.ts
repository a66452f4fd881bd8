/**
 * The alert evaluator: every interval, reads the rules, checks them against the store and fires
 * each new breach once, as a `cairn.alert` outbox message. Run one in every server (or several):
 * firing is deduplicated by the store, so evaluators on one store never fire an alert twice.
 */
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import type { AlertPayload, AlertRule } from "../../core/alert-schemas.js";
import type { Store } from "../../core/store.js";
import type { EngineLogger } from "../../engine/logger.js";
import { consoleLogger } from "../../engine/logger.js";
import { checkRules, type AlertCheckStore } from "./alert-checks.js";
import { fireAlert, recoverAlerts, type AlertFireStore } from "./alert-fire.js";
import { readAlertRules } from "./alert-rules.js";

/** New alerts one rule fires at most per evaluation; the rest fire at the next one. */
export const MAX_NEW_ALERTS_PER_RULE = 20;

/** Options of {@link startAlertEvaluator}. */
export interface AlertEvaluatorOptions {
  /** Time between evaluations, in ms. Default 30 s. */
  intervalMs?: number;
  /** The clock (epoch ms). Default `Date.now`. */
  clock?: () => number;
  /** Recorded as the holder of alert runs while they are written. Default `alerts:<host>:<pid>:<random>`. */
  evaluatorId?: string;
  /** Where evaluation errors go. Default JSON lines on stderr. */
  logger?: EngineLogger;
}

/** What one evaluation did. */
export interface AlertEvaluation {
  /** Rules checked. */
  rules: number;
  /** Alerts this evaluation fired (breaches that had fired before are not repeated). */
  fired: AlertPayload[];
  /** Alerts a dead evaluator had left half-written, finished now. */
  recovered: number;
}

/** A running evaluator. */
export interface AlertEvaluator {
  readonly evaluatorId: string;
  /** Evaluates now (also what the timer calls); concurrent calls share one evaluation. */
  evaluate(): Promise<AlertEvaluation>;
  /** Stops the timer and waits for an evaluation in flight. */
  stop(): Promise<void>;
}

/** The store slices an evaluation needs. */
export type AlertStore = AlertCheckStore & AlertFireStore & Pick<Store, "listAudit">;

/**
 * Checks `rules` at `now` and fires every breach not fired before. `rules` default to the stored
 * rule set (see `readAlertRules`).
 * @example
 * const { fired } = await evaluateAlerts(engine.store, { now: Date.now(), evaluatorId: "alerts:once" });
 */
export async function evaluateAlerts(store: AlertStore, options: { now: number; evaluatorId: string; rules?: readonly AlertRule[] }): Promise<AlertEvaluation> {
  const { now, evaluatorId } = options;
  const recovered = await recoverAlerts(store, evaluatorId, now);
  const rules = options.rules ?? (await readAlertRules(store)).rules;
  const fired: AlertPayload[] = [];
  if (rules.length === 0) return { rules: 0, fired, recovered };
  const firedAt = new Date(now).toISOString();
  const perRule = new Map<string, number>();
  for (const breach of await checkRules(store, rules, now)) {
    // Breaches that fired before do not count: a rule's older breaches never hold its new ones back.
    if ((perRule.get(breach.rule) ?? 0) >= MAX_NEW_ALERTS_PER_RULE) continue;
    const payload: AlertPayload = { ...breach, firedAt };
    if (!(await fireAlert(store, payload, evaluatorId, now))) continue;
    fired.push(payload);
    perRule.set(breach.rule, (perRule.get(breach.rule) ?? 0) + 1);
  }
  return { rules: rules.length, fired, recovered };
}

/**
 * Starts evaluating the stored alert rules every `intervalMs` (the first time at once).
 * @example
 * const alerts = startAlertEvaluator(engine.store, { intervalMs: 30_000 });
 * engine.onMessage("cairn.alert", (m) => pager.notify(m.payload, { dedupeKey: m.messageId }));
 * await alerts.stop();
 */
export function startAlertEvaluator(store: AlertStore, options: AlertEvaluatorOptions = {}): AlertEvaluator {
  const intervalMs = options.intervalMs ?? 30_000;
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 10)
    throw new RangeError(`startAlertEvaluator: intervalMs must be a whole number of ms of at least 10, got ${String(intervalMs)}.`);
  const clock = options.clock ?? Date.now;
  const logger = options.logger ?? consoleLogger();
  const evaluatorId = options.evaluatorId ?? `alerts:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  let running: Promise<AlertEvaluation> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const evaluate = (): Promise<AlertEvaluation> => {
    running ??= evaluateAlerts(store, { now: clock(), evaluatorId }).finally(() => (running = undefined));
    return running;
  };
  const tick = () => {
    evaluate()
      .then((result) => {
        for (const alert of result.fired) logger.log("warn", "alert fired", { rule: alert.rule, alertId: alert.alertId, summary: alert.summary });
      })
      .catch((error: unknown) => logger.log("error", "alert evaluation failed", { evaluatorId, error: String((error as Error)?.stack ?? error) }))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  tick();
  return {
    evaluatorId,
    evaluate,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
