import type { z } from "zod";
import { EventInvalidError, ValidationError, type EventIssue } from "../core/errors.js";
import { eventTypeSchema } from "../core/schemas.js";

const EVENT = Symbol.for("cairn.event");

/**
 * A typed event type: its name and the zod schema its payloads must match. Made by {@link defineEvent};
 * pass it wherever an event type goes (`engine.sendEvent`, `engine.publishEvent`, `ctx.waitForEvent`,
 * `defineWorkflow({ on })`, `cancelOn`) to get its payload checked at the send and typed at the wait.
 */
export interface EventDefinition<T = unknown> {
  readonly name: string;
  readonly schema: z.ZodType<T>;
  /** Brand, so a plain `{ name, schema }` object is not taken for one by accident. */
  readonly [EVENT]: true;
}

/** The payload type of an {@link EventDefinition}. */
export type EventPayload<E> = E extends EventDefinition<infer T> ? T : never;

/**
 * Declares an event type with the schema of its payload. A payload sent with this type (by name or
 * by the definition) that does not match is refused with {@link EventInvalidError} (HTTP 422), and
 * `ctx.waitForEvent(definition)` returns the inferred type. Register the definitions an engine must
 * check by name with `createEngine({ events })` (those a workflow's `on`/`cancelOn` names are registered with it).
 * @example
 * const orderCreated = defineEvent("order.created", z.object({ orderId: z.string(), total: z.number() }));
 * const order = await ctx.waitForEvent(orderCreated); // { orderId: string; total: number }
 * await engine.publishEvent(orderCreated, { orderId: "o-1", total: 12 }, { eventId: "evt-1" });
 */
export function defineEvent<S extends z.ZodType>(name: string, schema: S): EventDefinition<z.output<S>> {
  const parsed = eventTypeSchema.safeParse(name);
  if (!parsed.success) throw new ValidationError(`defineEvent: name must be 1-256 characters, got ${JSON.stringify(name)}.`);
  if (typeof schema !== "object" || schema === null || typeof (schema as { safeParse?: unknown }).safeParse !== "function") {
    throw new ValidationError(`defineEvent("${name}"): pass a zod schema as the second argument, e.g. z.object({ orderId: z.string() }).`);
  }
  return Object.freeze({ name, schema: schema as z.ZodType<z.output<S>>, [EVENT]: true as const });
}

/** True for values made by {@link defineEvent}. */
export function isEventDefinition(value: unknown): value is EventDefinition {
  return typeof value === "object" && value !== null && (value as { [EVENT]?: unknown })[EVENT] === true;
}

/** The type name of an event given by name or by definition. */
export function eventName(type: string | EventDefinition): string {
  return isEventDefinition(type) ? type.name : type;
}

/** The event definitions an engine checks payloads against, by name. */
export class EventRegistry {
  private readonly byName = new Map<string, EventDefinition>();

  constructor(definitions: readonly unknown[]) {
    for (const [i, definition] of definitions.entries()) {
      if (!isEventDefinition(definition)) throw new ValidationError(`createEngine: events[${i}] is not an event type; make it with defineEvent(name, schema).`);
      this.add(definition);
    }
  }

  /** Registers a definition; two different schemas under one name are refused. */
  add(definition: EventDefinition): void {
    const known = this.byName.get(definition.name);
    if (known && known !== definition)
      throw new ValidationError(`createEngine: event "${definition.name}" is defined twice with different schemas; define it once and share it.`);
    this.byName.set(definition.name, definition);
  }

  /**
   * The payload to deliver: checked against the definition given, or registered under `type`.
   * A type no definition declares passes unchecked. Throws EventInvalidError.
   */
  check(type: string | EventDefinition, payload: unknown): unknown {
    const definition = isEventDefinition(type) ? type : this.byName.get(type);
    if (!definition) return payload;
    const result = definition.schema.safeParse(payload);
    if (!result.success) throw new EventInvalidError(definition.name, toIssues(result.error.issues));
    return result.data;
  }
}

function toIssues(issues: readonly { path: readonly PropertyKey[]; message: string; code: string }[]): EventIssue[] {
  return issues.slice(0, 50).map((issue) => ({
    path: issue.path.map((p) => (typeof p === "number" ? p : String(p))),
    message: issue.message,
    code: issue.code,
  }));
}
