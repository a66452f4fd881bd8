import { z } from "zod";
import { InvalidScheduleError } from "../core/errors.js";
import type { CatchUpPolicy, OverlapPolicy, ScheduleDefinitionRecord } from "../core/schedule.js";
import { describeIssues } from "../core/schemas.js";
import { encode } from "../core/serialize.js";
import { parseCron } from "./cron.js";
import { isWorkflow } from "./define-workflow.js";
import type { Workflow } from "./workflow.js";

export { parseScheduleRunId, scheduleRunId } from "../core/schedule.js";
export type { CatchUpPolicy, OverlapPolicy } from "../core/schedule.js";

/**
 * What {@link defineSchedule} takes. See docs/operations/schedules.md.
 * @example
 * defineSchedule({ name: "nightly-report", workflow: report, cron: "0 3 * * *", timezone: "Europe/Berlin", input: { team: "ops" } });
 */
export interface ScheduleOptions<I = unknown> {
  /** Unique name; part of every tick's run id (`schedule:<name>:<ISO tick>`). Letters, digits, `._-`, at most 100. */
  name: string;
  /** The workflow a tick starts (or its registered name); the firing engine starts its newest registered version. */
  workflow: Workflow<I, any> | string;
  /** 5 fields (minute precision) or 6 (leading seconds), croner syntax, e.g. `"0 9 * * 1-5"`, `"*\/10 * * * * *"`. */
  cron: string;
  /** IANA time zone the expression is read in. Default `"UTC"`. */
  timezone?: string;
  /** The workflow input of every tick (plain JSON-able data). The tick time is in the run id: see {@link parseScheduleRunId}. */
  input?: I;
  /**
   * A tick that falls due while this schedule's previous run has not finished: `skip` it (counted), `buffer` it
   * (at most one: it starts when the previous run finishes; later ticks meanwhile are skipped), or `allow` it
   * (start anyway). Default `"skip"`.
   */
  overlap?: OverlapPolicy;
  /** Ticks missed while no scheduler ran: fire `none`, the `latest` one, or `all` (up to `maxCatchUp`). Default `"latest"`. */
  catchUp?: CatchUpPolicy;
  /** Most missed ticks `catchUp: "all"` fires, the newest ones. Default 100. */
  maxCatchUp?: number;
  /** A tick at most this late is on time and always fires; older ones are missed. Default 60 000 ms. */
  graceMs?: number;
}

/** A validated schedule definition, ready for `createEngine({ schedules })` or `engine.schedule()`. */
export interface Schedule<I = unknown> {
  readonly kind: "cairn.schedule";
  readonly name: string;
  readonly workflow: string;
  readonly cron: string;
  readonly timezone: string;
  readonly input: I;
  readonly overlap: OverlapPolicy;
  readonly catchUp: CatchUpPolicy;
  readonly maxCatchUp: number;
  readonly graceMs: number;
}

function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Schedule names: shared by the library, the HTTP API and the CLI. */
export const scheduleNameSchema = z
  .string()
  .min(1, "must not be empty")
  .max(100, "must be at most 100 characters")
  .regex(/^[A-Za-z0-9._-]+$/, "may contain only letters, digits, '.', '_' and '-'");

/** The options of a schedule (workflow given by name), as the library, the API and the CLI validate them. */
export const scheduleSchema = z
  .object({
    name: scheduleNameSchema,
    workflow: z.string().min(1, "must name a workflow"),
    cron: z.string().min(1, "must not be empty").max(200),
    timezone: z.string().refine(knownTimeZone, "is not a known IANA time zone (e.g. Europe/Berlin, America/New_York, UTC)").default("UTC"),
    input: z.unknown().optional(),
    overlap: z.enum(["skip", "buffer", "allow"]).default("skip"),
    catchUp: z.enum(["none", "latest", "all"]).default("latest"),
    maxCatchUp: z.number().int().min(1).max(10_000).default(100),
    graceMs: z.number().int().min(0).max(86_400_000).default(60_000),
  })
  .strict();

/**
 * Defines a schedule: a workflow started on a cron in a time zone, exactly once per tick however many
 * workers run. Validates everything now: a bad cron expression or an unknown time zone throws
 * {@link InvalidScheduleError}.
 * @example
 * const nightly = defineSchedule({ name: "nightly", workflow: report, cron: "0 3 * * *", timezone: "Europe/Berlin", overlap: "buffer" });
 * const engine = await createEngine({ workflows: [report], schedules: [nightly] });
 * engine.startWorker(); // workers run the scheduler
 */
export function defineSchedule<I>(options: ScheduleOptions<I>): Schedule<I> {
  const name = typeof (options as { name?: unknown } | undefined)?.name === "string" ? options.name : "(unnamed)";
  if (typeof options !== "object" || options === null) throw new InvalidScheduleError(name, "pass an object with name, workflow and cron");
  const workflow = isWorkflow(options.workflow) ? options.workflow.name : options.workflow;
  const parsed = scheduleSchema.safeParse({ ...options, workflow });
  if (!parsed.success) throw new InvalidScheduleError(name, describeIssues(parsed.error));
  const data = parsed.data;
  try {
    parseCron(data.cron, data.timezone);
  } catch (error) {
    throw new InvalidScheduleError(name, `cron "${data.cron}" does not parse (${(error as Error).message})`);
  }
  try {
    encode(data.input);
  } catch (error) {
    throw new InvalidScheduleError(name, `input cannot be stored: ${(error as Error).message}`);
  }
  return Object.freeze({ kind: "cairn.schedule", ...data, input: data.input as I });
}

/** True for what {@link defineSchedule} returns. */
export function isSchedule(value: unknown): value is Schedule<unknown> {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "cairn.schedule";
}

/** The stored form of a definition. */
export function toDefinitionRecord(schedule: Schedule<unknown>): ScheduleDefinitionRecord {
  return {
    name: schedule.name,
    workflow: schedule.workflow,
    cron: schedule.cron,
    timezone: schedule.timezone,
    input: encode(schedule.input),
    overlap: schedule.overlap,
    catchUp: schedule.catchUp,
    maxCatchUp: schedule.maxCatchUp,
    graceMs: schedule.graceMs,
  };
}

/** A schedule as `engine.listSchedules()` and `cairn schedules` show it. */
export interface ScheduleInfo {
  name: string;
  workflow: string;
  cron: string;
  timezone: string;
  input: unknown;
  overlap: OverlapPolicy;
  catchUp: CatchUpPolicy;
  maxCatchUp: number;
  graceMs: number;
  status: "active" | "paused";
  /** When the next tick falls due (null when paused or the expression never matches again). */
  nextTickAt: Date | null;
  /** The last tick that started a run. */
  lastTickAt: Date | null;
  lastRunId: string | null;
  /** Status of the last run, when it still exists. */
  lastRunStatus: string | null;
  bufferedTickAt: Date | null;
  firedCount: number;
  skippedCount: number;
  missedCount: number;
  /** The scheduler holding the lease, if any. */
  owner: string | null;
}
