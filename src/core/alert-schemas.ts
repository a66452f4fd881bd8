/**
 * Alert rules and fired alerts: the schemas shared by the rules file (`cairn serve --alerts`), the
 * HTTP API (`GET`/`POST /alerts/rules`, `GET /alerts`), the evaluator and the client.
 */
import { z } from "zod";
import { durationSchema, toMs } from "./duration.js";
import { ValidationError } from "./errors.js";
import { describeIssues, NO_CONTROL_CHARACTERS } from "./schemas.js";

/** What an alert rule watches. */
export type AlertKind = "spendPerRun" | "spendPerWorkflow" | "spendPerDay" | "failureRate" | "stuckRuns" | "humanWaiting";

/** Every {@link AlertKind}. */
export const ALERT_KINDS: readonly AlertKind[] = ["spendPerRun", "spendPerWorkflow", "spendPerDay", "failureRate", "stuckRuns", "humanWaiting"];

/** The outbox topic every alert is emitted on: give it a handler or webhook to receive alerts. */
export const ALERT_TOPIC = "cairn.alert";

/** The most rules one rule set may hold (each is evaluated every interval). */
export const MAX_ALERT_RULES = 100;

const ruleName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'use 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. "daily-spend")');
const workflow = z
  .string()
  .min(1)
  .max(200)
  .regex(NO_CONTROL_CHARACTERS, "must not contain control characters")
  .optional()
  .describe("Only this workflow's runs (default: every workflow).");
const usd = z
  .number({ message: "must be an amount in US dollars, such as 5 or 0.25" })
  .positive("must be an amount in US dollars above 0, such as 5 or 0.25")
  .max(1_000_000_000);
const windowOf = (fallbackMs: number, what: string) =>
  durationSchema
    .refine((ms) => ms >= 60_000 && ms <= 31 * 86_400_000, { message: 'must be a duration between "1m" and "31d", such as "1h"' })
    .default(fallbackMs)
    .describe(what);
const description = z.string().max(500).optional().describe("Shown with every alert of this rule.");

const spendPerRun = z
  .object({
    kind: z.literal("spendPerRun"),
    name: ruleName,
    threshold: usd.describe("Model spend of one run, its children's included, above which it alerts (USD)."),
    window: windowOf(86_400_000, "Runs created this long ago or later are watched."),
    workflow,
    description,
  })
  .strict();
const spendPerWorkflow = z
  .object({
    kind: z.literal("spendPerWorkflow"),
    name: ruleName,
    threshold: usd.describe("Model spend of one workflow's runs created in one window, above which it alerts (USD)."),
    window: windowOf(3_600_000, "The window: fixed slots from the epoch (a 1h window is each clock hour, UTC)."),
    workflow,
    description,
  })
  .strict();
const spendPerDay = z
  .object({
    kind: z.literal("spendPerDay"),
    name: ruleName,
    threshold: usd.describe("Model spend of the runs created in one UTC day, above which it alerts (USD)."),
    workflow,
    description,
  })
  .strict();
const failureRate = z
  .object({
    kind: z.literal("failureRate"),
    name: ruleName,
    threshold: z
      .number({ message: "must be a fraction of finished runs, such as 0.2 for 20%" })
      .gt(0, "must be a fraction above 0, such as 0.2 for 20%")
      .max(1, "must be a fraction of at most 1, such as 0.2 for 20%")
      .describe("Failed (or dead) runs over finished runs created in one window, above which it alerts."),
    window: windowOf(3_600_000, "The window: fixed slots from the epoch."),
    minRuns: z.number().int().min(1).max(1_000_000).default(10).describe("Finished runs a window needs before its rate counts (default 10)."),
    workflow,
    description,
  })
  .strict();
const stuckRuns = z
  .object({
    kind: z.literal("stuckRuns"),
    name: ruleName,
    threshold: z
      .number({ message: "must be a number of runs, such as 1" })
      .int("must be a whole number of runs")
      .min(1, "must be at least 1 run")
      .default(1)
      .describe("Stuck runs (unfinished runs nothing will move) at or above which it alerts."),
    window: windowOf(3_600_000, "Alerts again at most once per window while runs stay stuck."),
    description,
  })
  .strict();
const humanWaiting = z
  .object({
    kind: z.literal("humanWaiting"),
    name: ruleName,
    threshold: z
      .union([z.number(), z.string()], { message: 'must be a wait such as "4h", "30m" or a number of ms' })
      .transform((value, ctx) => {
        const ms = typeof value === "number" || /^\d+(\.\d+)?\s*(ms|s|m|h|d)$/.test(value.trim()) ? toMsOrNaN(value) : Number.NaN;
        if (Number.isFinite(ms) && ms >= 1_000) return ms;
        ctx.addIssue({ code: "custom", message: 'must be a wait of at least "1s", such as "4h", "30m" or a number of ms' });
        return z.NEVER;
      })
      .describe('How long a question may wait for a person before it alerts, such as "4h" (once per question).'),
    workflow,
    description,
  })
  .strict();

function toMsOrNaN(value: number | string): number {
  try {
    return toMs(value);
  } catch {
    return Number.NaN;
  }
}

/** Zod schema of one alert rule; durations parse to milliseconds, defaults filled in. */
export const alertRuleSchema = z.discriminatedUnion("kind", [spendPerRun, spendPerWorkflow, spendPerDay, failureRate, stuckRuns, humanWaiting], {
  error: (issue) => (issue.code === "invalid_union" ? `must be one of ${ALERT_KINDS.join(", ")}` : undefined),
});

/** One alert rule, as validated: durations in milliseconds. */
export type AlertRule = z.output<typeof alertRuleSchema>;
/** One alert rule as written in a rules file or a `POST /alerts/rules` body (durations as `"1h"` or ms). */
export type AlertRuleInput = z.input<typeof alertRuleSchema>;

/** Zod schema of a rule set: `{ "rules": [ … ] }`, at most {@link MAX_ALERT_RULES}, names unique. */
export const alertRuleSetSchema = z
  .object({
    rules: z
      .array(alertRuleSchema)
      .max(MAX_ALERT_RULES, `must hold at most ${MAX_ALERT_RULES} rules`)
      .superRefine((rules, ctx) => {
        const seen = new Set<string>();
        rules.forEach((rule, i) => {
          if (seen.has(rule.name))
            ctx.addIssue({ code: "custom", path: [i, "name"], message: `"${rule.name}" is used by an earlier rule; give each rule its own name` });
          seen.add(rule.name);
        });
      }),
  })
  .strict();

/**
 * Validates a rule set (the parsed JSON of a rules file or a request body).
 * @throws ValidationError naming each bad field, e.g. `rules.2.threshold: must be an amount in US dollars above 0`.
 * @example parseAlertRules({ rules: [{ name: "daily", kind: "spendPerDay", threshold: 50 }] }, "alerts.json")
 */
export function parseAlertRules(value: unknown, where: string): AlertRule[] {
  const parsed = alertRuleSetSchema.safeParse(value);
  if (!parsed.success)
    throw new ValidationError(
      `${where}: ${describeIssues(parsed.error)}. A rule set is { "rules": [{ "name", "kind", "threshold", … }] }; see docs/operations/alerts.md.`,
    );
  return parsed.data.rules;
}

/** What an alert says: the payload of its `cairn.alert` outbox message. Amounts in micro-dollars, times ISO 8601. */
export const alertPayloadSchema = z.object({
  alertId: z.string().describe("Stable id: the same breach always has the same id (deduplicate by it)."),
  rule: z.string(),
  kind: z.enum(ALERT_KINDS as [AlertKind, ...AlertKind[]]),
  summary: z.string().describe("One line for people."),
  value: z.number().describe("The measured value: micro-dollars for spend, a fraction for failureRate, runs for stuckRuns, ms for humanWaiting."),
  threshold: z.number().describe("The rule's threshold, in the unit of value."),
  windowStart: z.string().nullable(),
  windowEnd: z.string().nullable(),
  workflow: z.string().nullable(),
  runIds: z.array(z.string()).describe("Runs concerned (at most 10)."),
  requestId: z.string().nullable(),
  description: z.string().nullable(),
  firedAt: z.string(),
});

/** An alert's payload (see {@link alertPayloadSchema}). */
export type AlertPayload = z.output<typeof alertPayloadSchema>;

/** A fired alert as `GET /alerts` lists it: its payload and how its outbox message fares. */
export const apiAlertSchema = alertPayloadSchema.extend({
  runId: z.string().describe("The alert's own run (workflow cairn.alert), holding its journal."),
  messageId: z.string().nullable().describe("Its outbox message id; null while the alert is being written."),
  delivery: z.enum(["pending", "delivered", "dead", "none"]).describe("The outbox message's status; none before it is written."),
});

/** `GET /alerts` response. */
export const alertListSchema = z.object({ alerts: z.array(apiAlertSchema) });
/** An alert as `GET /alerts` lists it. */
export type ApiAlert = z.output<typeof apiAlertSchema>;

/** `GET /alerts` query. */
export const alertListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).default(20).describe("At most this many, newest first (default 20)."),
    rule: ruleName.optional().describe("Only this rule's alerts."),
  })
  .strict();

/** `GET /alerts/rules` and `POST /alerts/rules` response. */
export const alertRulesResponse = z.object({
  rules: z.array(z.record(z.string(), z.unknown())).describe("The rules, durations in ms, defaults filled in."),
  updatedAt: z.string().nullable(),
  updatedBy: z.string().nullable().describe("The audit actor who set them."),
  source: z.string().nullable().describe("Where they came from when not the API, e.g. `cairn serve --alerts alerts.json`."),
});

/** `GET /alerts/rules` as the client receives it. */
export type ApiAlertRules = z.output<typeof alertRulesResponse>;
