import { ValidationError } from "../core/errors.js";
import { eventTypeSchema } from "../core/schemas.js";
import { decode, encode } from "../core/serialize.js";
import type { NewRun, Store } from "../core/store.js";
import type { RunFlow } from "../core/flow-control.js";
import { LIVE_STATUSES } from "../core/run.js";
import { isEventDefinition, type EventDefinition } from "./define-event.js";
import type { CancelOn, Workflow, WorkflowDefinition } from "./workflow.js";

const PATH = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

/** What {@link parseTriggers} adds to a workflow: its `on`, `cancelOn` and the typed events they name. */
export interface Triggers {
  on?: readonly string[];
  cancelOn?: readonly CancelOn[];
  events?: readonly EventDefinition[];
}

/** Checks a definition's `on` and `cancelOn` (defineWorkflow); throws ValidationError naming the bad one. */
export function parseTriggers(definition: Pick<WorkflowDefinition<unknown, unknown>, "name" | "on" | "cancelOn">): Triggers {
  const events: EventDefinition[] = [];
  const typeOf = (value: unknown, where: string): string => {
    if (isEventDefinition(value)) {
      events.push(value);
      return value.name;
    }
    if (!eventTypeSchema.safeParse(value).success) {
      throw new ValidationError(`defineWorkflow("${definition.name}"): ${where} must be an event type (1-256 characters) or a defineEvent type.`);
    }
    return value as string;
  };
  const triggers: { on?: string[]; cancelOn?: CancelOn[]; events?: EventDefinition[] } = {};
  if (definition.on !== undefined) {
    const list = Array.isArray(definition.on) ? (definition.on as unknown[]) : [definition.on];
    triggers.on = [...new Set(list.map((value, i) => typeOf(value, `on[${i}]`)))];
  }
  if (definition.cancelOn !== undefined) {
    if (!Array.isArray(definition.cancelOn)) throw new ValidationError(`defineWorkflow("${definition.name}"): cancelOn must be a list of { event, match }.`);
    triggers.cancelOn = (definition.cancelOn as unknown[]).map((entry, i) => {
      if (typeof entry !== "object" || entry === null)
        throw new ValidationError(`defineWorkflow("${definition.name}"): cancelOn[${i}] must be { event, match? }.`);
      const { event, match } = entry as { event?: unknown; match?: unknown };
      const type = typeOf(event, `cancelOn[${i}].event`);
      if (match === undefined) return { event: type };
      if (typeof match !== "string" || !PATH.test(match) || match.length > 256) {
        throw new ValidationError(
          `defineWorkflow("${definition.name}"): cancelOn[${i}].match must be a field name or dotted path such as "orderId" or "order.id".`,
        );
      }
      return { event: type, match };
    });
  }
  if (events.length > 0) triggers.events = events;
  return triggers;
}

/** The value at a dotted path of a decoded JSON value, or undefined. Own properties only. */
export function valueAt(value: unknown, path: string): unknown {
  let current = value;
  for (const part of path.split(".")) {
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** True when every `match` path of `payload` holds a value equal (as JSON) to the given one. */
export function payloadMatches(payload: unknown, match: Readonly<Record<string, unknown>>): boolean {
  for (const [path, expected] of Object.entries(match)) {
    const actual = valueAt(payload, path);
    if (actual === undefined || !sameJson(actual, expected)) return false;
  }
  return true;
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return encode(a) === encode(b);
  } catch {
    return false;
  }
}

/** Checks a wait's `match` option; returns it as plain JSON (so the journal can hold it). */
export function checkMatch(match: unknown, where: string): Record<string, unknown> | undefined {
  if (match === undefined) return undefined;
  if (typeof match !== "object" || match === null || Array.isArray(match)) throw new ValidationError(`${where}: match must be an object of field → value.`);
  const entries = Object.entries(match);
  if (entries.length === 0 || entries.length > 16) throw new ValidationError(`${where}: match must name 1 to 16 fields.`);
  for (const [path, value] of entries) {
    if (!PATH.test(path) || path.length > 256) throw new ValidationError(`${where}: match key "${path.slice(0, 80)}" must be a field name or dotted path.`);
    if (value === undefined) throw new ValidationError(`${where}: match.${path} is undefined; give the value the field must have.`);
  }
  return decode<Record<string, unknown>>(encode(match));
}

/** What `engine.publishEvent` did. */
export interface PublishResult {
  eventId: string;
  /** One per workflow whose `on` names the type: the run the event started (`created: false` when an earlier publish of this event id did). */
  runs: { workflow: string; runId: string; created: boolean }[];
  /** Live runs a `cancelOn` of the type matched and cancelled. */
  cancelled: string[];
}

/** What {@link publish} needs from the engine. */
export interface PublishHost {
  store: Pick<Store, "createRuns" | "listRuns">;
  clock(): number;
  /** The newest registered version of each workflow name. */
  workflows(): Workflow<any, any>[];
  flowOf(workflow: Workflow<any, any>): RunFlow | undefined;
  /** Cancels a run; resolves false when it was already finished. */
  cancel(runId: string, reason: string): Promise<boolean>;
}

/** The run id an event starts for a workflow: stable, so a repeated event id finds the run instead of starting another. */
export function triggeredRunId(workflow: string, eventId: string): string {
  return `${workflow}:${eventId}`;
}

/**
 * Starts one run per subscribed workflow, all in one store transaction (a crash leaves all or none;
 * a repeat of the event id finds them), then cancels the live runs a `cancelOn` matches (idempotent).
 */
export async function publish(host: PublishHost, type: string, payload: unknown, eventId: string): Promise<PublishResult> {
  const workflows = host.workflows();
  const subscribed = workflows.filter((w) => w.on?.includes(type));
  const encoded = encode(payload);
  const runs: NewRun[] = subscribed.map((w) => {
    const flow = host.flowOf(w);
    return { runId: triggeredRunId(w.name, eventId), workflow: w.name, version: w.version, input: encoded, ...(flow ? { flow } : {}) };
  });
  const created = runs.length === 0 ? [] : await host.store.createRuns(runs, host.clock());
  const result: PublishResult = { eventId, runs: [], cancelled: [] };
  created.forEach((r, i) => {
    const workflow = subscribed[i]!.name;
    if (!r.created && (r.run.workflow !== workflow || r.run.input !== encoded)) {
      throw new ValidationError(
        `publishEvent: event id "${eventId}" was already published with another payload (run "${r.run.runId}" exists); use a new event id.`,
      );
    }
    result.runs.push({ workflow, runId: r.run.runId, created: r.created });
  });
  for (const workflow of workflows) {
    for (const trigger of workflow.cancelOn ?? []) {
      if (trigger.event !== type) continue;
      const expected = trigger.match === undefined ? undefined : valueAt(payload, trigger.match);
      if (trigger.match !== undefined && expected === undefined) continue;
      for (const runId of await liveRunsMatching(host.store, workflow.name, trigger.match, expected)) {
        if (await host.cancel(runId, `cancelled by event "${type}" (${eventId})`)) result.cancelled.push(runId);
      }
    }
  }
  return result;
}

/**
 * Live runs of a workflow whose input has `expected` at `path` (every live run without a path).
 * Reads the live runs page by page: the cost follows the workflow's live runs, not its history.
 */
async function liveRunsMatching(store: Pick<Store, "listRuns">, workflow: string, path: string | undefined, expected: unknown): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listRuns({ workflow, status: [...LIVE_STATUSES], limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const run of page.runs) {
      if (path === undefined) found.push(run.runId);
      else if (sameJson(valueAt(safeDecode(run.input), path), expected)) found.push(run.runId);
    }
    cursor = page.nextCursor;
  } while (cursor);
  return found;
}

function safeDecode(text: string): unknown {
  try {
    return decode(text);
  } catch {
    return undefined;
  }
}
