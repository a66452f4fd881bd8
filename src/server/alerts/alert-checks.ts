/**
 * The checks behind each rule kind: what breaches a rule at `now`, each breach with the stable id
 * that makes it fire once (rule and window, run or request). Reads store aggregates only: grouped
 * run counts, the completed steps of recent runs (one pass for every spend rule), the stuck-run
 * query and the pending human requests, oldest first.
 */
import type { AlertPayload, AlertRule } from "../../core/alert-schemas.js";
import { formatMs } from "../../core/duration.js";
import type { Store } from "../../core/store.js";
import { ALERT_WORKFLOW } from "./alert-fire.js";
import { readSpend, rollUp, type SpendByRun } from "./alert-spend.js";

/** The store slices the checks read. */
export type AlertCheckStore = Pick<Store, "listRunEntries" | "countRuns" | "listRuns" | "listStuckRuns" | "listHumanRequests" | "getRun">;

/** A breach: an alert's payload before it fires. */
export type Breach = Omit<AlertPayload, "firedAt">;

const DAY = 86_400_000;
/** Breaches one rule reports at most (per run or per request kinds): a bound on one evaluation's work. */
export const MAX_BREACHES_PER_RULE = 1000;
/** Stuck runs a stuck-run check reads. */
const STUCK_LIMIT = 100;
/** Pending human requests a waiting check reads (oldest first). */
const PENDING_LIMIT = 500;

/** The start of the fixed window of length `size` that holds `at` (windows start at the epoch). */
export function windowStart(at: number, size: number): number {
  return Math.floor(at / size) * size;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** Micro-dollars as dollars for people: `$12.50`, `$0.0045`. */
export function usd(micros: number): string {
  const dollars = micros / 1_000_000;
  return `$${dollars >= 1 ? dollars.toFixed(2) : dollars.toPrecision(2).replace(/0+$/, "").replace(/\.$/, "")}`;
}

/** Everything the rules breach at `now`, in rule order. */
export async function checkRules(store: AlertCheckStore, rules: readonly AlertRule[], now: number): Promise<Breach[]> {
  const spend = await spendFor(store, rules, now);
  const breaches: Breach[] = [];
  for (const rule of rules) breaches.push(...(await checkRule(store, rule, now, spend)));
  return breaches;
}

/** One pass over the spend of every run the spend rules look at (from the earliest window they need). */
async function spendFor(store: AlertCheckStore, rules: readonly AlertRule[], now: number): Promise<SpendByRun | undefined> {
  let since = Infinity;
  for (const rule of rules) {
    if (rule.kind === "spendPerRun") since = Math.min(since, now - rule.window);
    // The previous window too: a breach in its last moments is caught after it closed.
    if (rule.kind === "spendPerWorkflow") since = Math.min(since, windowStart(now, rule.window) - rule.window);
    if (rule.kind === "spendPerDay") since = Math.min(since, windowStart(now, DAY) - DAY);
  }
  return since === Infinity ? undefined : readSpend(store, since);
}

function base(rule: AlertRule, id: string): Pick<Breach, "alertId" | "rule" | "kind" | "description" | "workflow" | "requestId" | "windowStart" | "windowEnd"> {
  return {
    alertId: `${rule.name}/${id}`,
    rule: rule.name,
    kind: rule.kind,
    description: rule.description ?? null,
    workflow: "workflow" in rule ? (rule.workflow ?? null) : null,
    requestId: null,
    windowStart: null,
    windowEnd: null,
  };
}

async function checkRule(store: AlertCheckStore, rule: AlertRule, now: number, spend: SpendByRun | undefined): Promise<Breach[]> {
  switch (rule.kind) {
    case "spendPerRun": {
      const limit = rule.threshold * 1_000_000;
      const out: Breach[] = [];
      for (const run of rollUp(spend!.runs).values()) {
        if (run.costMicros < limit) continue;
        if (!spend!.runs.has(run.runId)) {
          // A parent that spent nothing itself: its workflow and age are its own, not its children's.
          const row = await store.getRun(run.runId);
          if (row) Object.assign(run, { workflow: row.workflow, createdAt: row.createdAt });
        }
        if (run.createdAt < now - rule.window || (rule.workflow && run.workflow !== rule.workflow)) continue;
        out.push({
          ...base(rule, `run/${run.runId}`),
          workflow: run.workflow,
          summary: `Run ${run.runId} (${run.workflow}) spent ${usd(run.costMicros)} on models${run.children.length ? ` with its ${run.children.length} child runs` : ""}, at or over the ${usd(limit)} limit of rule "${rule.name}".`,
          value: run.costMicros,
          threshold: limit,
          runIds: [run.runId, ...run.children].slice(0, 10),
        });
        if (out.length === MAX_BREACHES_PER_RULE) break;
      }
      return out;
    }
    case "spendPerWorkflow":
    case "spendPerDay": {
      const size = rule.kind === "spendPerDay" ? DAY : rule.window;
      const limit = rule.threshold * 1_000_000;
      const out: Breach[] = [];
      const current = windowStart(now, size);
      for (const start of [current - size, current]) {
        const byKey = new Map<string, { costMicros: number; runs: { runId: string; costMicros: number }[] }>();
        for (const run of spend!.runs.values()) {
          if (run.createdAt < start || run.createdAt >= start + size || run.workflow === ALERT_WORKFLOW) continue;
          if (rule.workflow && run.workflow !== rule.workflow) continue;
          const key = rule.kind === "spendPerDay" ? "" : run.workflow;
          const sum = byKey.get(key) ?? { costMicros: 0, runs: [] };
          sum.costMicros += run.costMicros;
          sum.runs.push({ runId: run.runId, costMicros: run.costMicros });
          byKey.set(key, sum);
        }
        for (const [workflow, sum] of byKey) {
          if (sum.costMicros < limit) continue;
          const scope = rule.kind === "spendPerDay" ? (rule.workflow ? `workflow ${rule.workflow}` : "all workflows") : `workflow ${workflow}`;
          out.push({
            ...base(rule, rule.kind === "spendPerDay" ? iso(start).slice(0, 10) : `${workflow}/${iso(start)}`),
            ...(rule.kind === "spendPerWorkflow" ? { workflow } : {}),
            windowStart: iso(start),
            windowEnd: iso(start + size),
            summary: `Model spend of ${scope} reached ${usd(sum.costMicros)} for runs created ${rule.kind === "spendPerDay" ? `on ${iso(start).slice(0, 10)} (UTC)` : `from ${iso(start)} to ${iso(start + size)}`}, at or over the ${usd(limit)} limit of rule "${rule.name}".`,
            value: sum.costMicros,
            threshold: limit,
            runIds: sum.runs
              .sort((a, b) => b.costMicros - a.costMicros)
              .slice(0, 10)
              .map((r) => r.runId),
          });
        }
      }
      return out;
    }
    case "failureRate": {
      const out: Breach[] = [];
      const current = windowStart(now, rule.window);
      for (const start of [current - rule.window, current]) {
        const filter = { createdAfter: start, createdBefore: start + rule.window, ...(rule.workflow ? { workflow: rule.workflow } : {}) };
        let failed = 0;
        let finished = 0;
        for (const row of await store.countRuns(filter)) {
          if (row.workflow === ALERT_WORKFLOW) continue;
          if (row.status === "failed" || row.status === "dead") failed += row.count;
          if (row.status === "failed" || row.status === "dead" || row.status === "completed") finished += row.count;
        }
        if (finished < rule.minRuns || failed / finished < rule.threshold) continue;
        const examples = await store.listRuns({ ...filter, status: ["failed", "dead"], limit: 10, previewBytes: 0 });
        out.push({
          ...base(rule, iso(start)),
          windowStart: iso(start),
          windowEnd: iso(start + rule.window),
          summary: `${failed} of ${finished} finished runs${rule.workflow ? ` of ${rule.workflow}` : ""} created from ${iso(start)} to ${iso(start + rule.window)} failed (${Math.round((failed / finished) * 1000) / 10}%), at or over the ${rule.threshold * 100}% limit of rule "${rule.name}".`,
          value: failed / finished,
          threshold: rule.threshold,
          runIds: examples.runs.map((run) => run.runId),
        });
      }
      return out;
    }
    case "stuckRuns": {
      const stuck = (await store.listStuckRuns(now, 60_000, STUCK_LIMIT)).filter((run) => run.workflow !== ALERT_WORKFLOW);
      if (stuck.length < rule.threshold) return [];
      const start = windowStart(now, rule.window);
      return [
        {
          ...base(rule, iso(start)),
          windowStart: iso(start),
          windowEnd: iso(start + rule.window),
          summary: `${stuck.length}${stuck.length === STUCK_LIMIT ? "+" : ""} runs are stuck (unfinished, and nothing will move them), at or over the ${rule.threshold} of rule "${rule.name}". See \`cairn runs --stuck\`.`,
          value: stuck.length,
          threshold: rule.threshold,
          runIds: stuck.slice(0, 10).map((run) => run.runId),
        },
      ];
    }
    case "humanWaiting": {
      const out: Breach[] = [];
      const pending = await store.listHumanRequests({ status: "pending", limit: PENDING_LIMIT });
      const workflows = new Map<string, string | undefined>();
      for (const request of pending) {
        const waited = now - request.createdAt;
        if (waited < rule.threshold) continue;
        if (!workflows.has(request.runId)) workflows.set(request.runId, (await store.getRun(request.runId))?.workflow);
        const workflow = workflows.get(request.runId);
        if (rule.workflow && workflow !== rule.workflow) continue;
        out.push({
          ...base(rule, `request/${request.requestId}`),
          workflow: workflow ?? null,
          requestId: request.requestId,
          summary: `Run ${request.runId} has waited ${formatMs(waited)} for a person to answer "${request.question.slice(0, 200)}", at or over the ${formatMs(rule.threshold)} limit of rule "${rule.name}".`,
          value: waited,
          threshold: rule.threshold,
          runIds: [request.runId],
        });
        if (out.length === MAX_BREACHES_PER_RULE) break;
      }
      return out;
    }
  }
}
