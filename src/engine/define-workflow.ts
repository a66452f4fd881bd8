import { z } from "zod";
import { ValidationError } from "../core/errors.js";
import { queueNameSchema } from "../core/flow-control.js";
import { isSystemWorkflow, SYSTEM_WORKFLOW_PREFIX } from "../core/run.js";
import { parseTriggers } from "./event-triggers.js";
import type { Workflow, WorkflowDefinition } from "./workflow.js";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

const definitionSchema = z.object({
  name: z
    .string()
    .regex(NAME, "use 1-128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit")
    .refine(
      (name) => !isSystemWorkflow(name),
      `names starting with "${SYSTEM_WORKFLOW_PREFIX}" are reserved for Cairn's own runs (alerts); choose another name`,
    ),
  version: z.string().min(1).max(64).optional(),
  queue: queueNameSchema.optional(),
  run: z.custom<(...args: unknown[]) => unknown>((value) => typeof value === "function", "run must be an async function (ctx, input) => output"),
});

/**
 * Defines a durable workflow. Runs are pinned to `version`; change it when you change
 * the order or kinds of ops, so runs started on the old code finish on the old code.
 * @example
 * const greet = defineWorkflow({
 *   name: "greet", version: "1",
 *   async run(ctx, input: { name: string }) {
 *     const text = await ctx.step("compose", () => `Hello, ${input.name}`);
 *     await ctx.sleep("pause", "1s");
 *     return text;
 *   },
 * });
 */
export function defineWorkflow<I, O>(definition: WorkflowDefinition<I, O>): Workflow<I, O> {
  const parsed = definitionSchema.safeParse(definition);
  if (!parsed.success) {
    throw new ValidationError(`defineWorkflow: ${parsed.error.issues.map((i) => `${i.path.join(".") || "definition"}: ${i.message}`).join("; ")}`);
  }
  const workflow: Workflow<I, O> = { name: definition.name, version: definition.version ?? "1", run: definition.run, ...parseTriggers(definition) };
  return Object.freeze(definition.queue === undefined ? workflow : { ...workflow, queue: definition.queue });
}

/** True for values shaped like a {@link Workflow} (used when loading modules). */
export function isWorkflow(value: unknown): value is Workflow {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<Workflow>;
  return typeof candidate.name === "string" && typeof candidate.version === "string" && typeof candidate.run === "function";
}
