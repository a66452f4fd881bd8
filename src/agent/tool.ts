import { createHash } from "node:crypto";
import { z } from "zod";
import type { Duration } from "../core/duration.js";
import { ValidationError } from "../core/errors.js";
import type { ReconcileResult, ResumeApproval, RetryPolicy, StepEffect, WorkflowContext } from "../engine/workflow.js";
import type { JsonValue, ToolSpec } from "./model/schemas.js";

/** What a tool's `run` receives besides its parsed input. */
export interface ToolContext {
  /**
   * `<runId>:tool:<turn>:<toolCallId>`: unique within the run (even when a provider reuses call ids on
   * every turn) and the same on every attempt and after every crash. Pass it downstream (e.g. an
   * Idempotency-Key header).
   */
  readonly idempotencyKey: string;
  /** The model's id for this call. */
  readonly toolCallId: string;
  readonly runId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Aborted on cancel, timeout, lease loss or shutdown. */
  readonly signal: AbortSignal;
  /** Renews the run's lease for a long call. */
  heartbeat(): void;
  /**
   * A credential the tool declared in `credentials` (`ctx.credential` with scope `tool:<name>`):
   * resolved now, never journaled, audited; any other name is refused. Given by the agent loop (absent
   * where a tool is run by other code, e.g. a plan's steps).
   */
  credential?(name: string): Promise<string>;
}

/**
 * What a tool's `workflow` function receives: the turn's durable context and the tool's state,
 * which the agent keeps in its loop state (so it is journaled in snapshots and survives a resume).
 */
export interface WorkflowToolContext {
  /** The agent turn's context: ops issued on it journal themselves and replay. */
  readonly ctx: WorkflowContext;
  readonly toolCallId: string;
  readonly runId: string;
  /** What the tool last passed to `setState` in this run (undefined at first). */
  readonly state: unknown;
  /** Keeps plain JSON data for the tool's next call in this run. */
  setState(state: unknown): void;
}

/** When and how a tool call waits for a person's approval. */
export interface ApprovalPolicy<I> {
  /** Which calls need approval; default every call. */
  when?: (input: I) => boolean;
  /** How long the approval may take; then `onTimeout` applies. Default: no limit. */
  timeout?: Duration;
  /** On timeout: reject the call (default; the model is told), approve it, or fail the run. */
  onTimeout?: "reject" | "approve" | "fail";
  /** The question shown to the approver; default names the tool and its arguments. */
  question?: (input: I) => string;
}

/** What {@link defineTool} takes. */
export interface ToolDefinition<I, O> {
  /** Letters, digits, `_` and `-`, up to 64 characters (what every provider accepts). */
  name: string;
  /** What the tool does and when to use it, for the model. */
  description: string;
  /** The arguments' schema: the model's arguments are parsed with it; invalid ones go back to the model as a tool error. */
  input: z.ZodType<I>;
  /**
   * What a crash between the call's intent and its outcome means (DESIGN §3.4): `none` and
   * `idempotent` run again with the same idempotency key; `reversible` compensates first;
   * `unsafe` asks a person whether it happened. `reconcile`, when given, is asked first.
   */
  effect: "none" | "idempotent" | "reversible" | "unsafe";
  run(input: I, context: ToolContext): Promise<O> | O;
  /**
   * The output's schema (optional). When given, a person who answers "did this happen?" for an
   * interrupted `unsafe` call with `skip` must give a value that matches it (without it, any value;
   * `skip` without a value is always refused, since the model needs the call's result).
   */
  output?: z.ZodType<O>;
  /** Did the call whose outcome was never journaled happen, and with what output? */
  reconcile?: (input: I, idempotencyKey: string) => Promise<ReconcileResult<O>> | ReconcileResult<O>;
  /** Undoes a `reversible` call (output undefined when its outcome is unknown). */
  compensate?: (input: I, output: O | undefined, idempotencyKey: string) => Promise<void> | void;
  /** Require a person's approval: `true` for every call, or a policy. */
  approval?: boolean | ApprovalPolicy<I>;
  /**
   * Fresh approval: before the call runs, a person must approve it again when the run was recovered
   * after a crash (`onResume`) or slept longer than `afterSleep` (the step option `approval`,
   * docs/operations/approvals.md). Independent of `approval`, which asks before every call.
   */
  resumeApproval?: ResumeApproval;
  /** Credentials the tool may use through `context.credential(name)` (names of `createEngine({ credentials })`); none by default. */
  credentials?: readonly string[];
  /** Retry policy of the call's step (default: 3 attempts). */
  retry?: RetryPolicy;
  /** Per-attempt timeout. */
  timeout?: Duration;
  /** The text the model sees for an output; default: strings as they are, anything else as JSON. */
  format?: (output: O) => string;
  /**
   * Runs the call as workflow code in the agent's turn instead of inside one step: it may issue
   * ops on `context.ctx` (steps, child runs, questions), each journaled on its own, and it must be
   * deterministic like any workflow code. When given, the agent calls this instead of `run`, and
   * `effect`, `retry`, `timeout`, `reconcile` and `compensate` are left to the ops it issues. Calls
   * of such tools in one turn run one after another, in the order the model made them. A
   * ValidationError it throws goes back to the model as the call's error.
   */
  workflow?: (input: I, context: WorkflowToolContext) => Promise<O>;
  /**
   * The call's arguments and output are secrets (credentials, personal data): the journal keeps them
   * for replay, but every view of the run (API, stream, CLI, dashboard transcript) shows `"[redacted]"`
   * for them and for any later copy of their text (see `secret()`).
   */
  secret?: boolean;
}

/** A tool made by {@link defineTool}. */
export interface Tool<I = any, O = any> extends ToolDefinition<I, O> {
  /** What the model is shown: name, description and the input's JSON Schema. */
  readonly spec: ToolSpec;
  /** The approval policy, resolved; null when the tool never needs approval. */
  readonly approvalPolicy: ApprovalPolicy<I> | null;
  /** JSON Schema of the output (`{}` when the tool declares none): what a `skip` value must match. */
  readonly outputSchema: Record<string, JsonValue>;
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const EFFECTS = ["none", "idempotent", "reversible", "unsafe"] as const satisfies readonly StepEffect[];

/**
 * Defines a tool an agent can call. Each call is a journaled step: its intent (with the hash of
 * its canonical arguments) is durable before `run` starts, and after a crash an unconfirmed call
 * is resolved by `effect`, never blindly rerun.
 * @example
 * const createIssue = defineTool({
 *   name: "create_issue",
 *   description: "Open an issue in the tracker.",
 *   input: z.object({ title: z.string(), body: z.string() }),
 *   effect: "idempotent",
 *   run: ({ title, body }, { idempotencyKey }) => tracker.create({ title, body }, { idempotencyKey }),
 * });
 */
export function defineTool<I, O>(definition: ToolDefinition<I, O>): Tool<I, O> {
  if (!definition || typeof definition !== "object") throw new ValidationError("defineTool needs a definition object.");
  const { name, description, input, effect, run } = definition;
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new ValidationError(`Tool name ${JSON.stringify(name)} is invalid: use 1–64 letters, digits, _ or -.`);
  }
  if (typeof description !== "string" || description.trim() === "") throw new ValidationError(`Tool "${name}" needs a description for the model.`);
  checkZod(name, "input", input);
  if (definition.output !== undefined) checkZod(name, "output", definition.output);
  if (!(EFFECTS as readonly string[]).includes(effect)) throw new ValidationError(`Tool "${name}": effect must be one of ${EFFECTS.join(", ")}.`);
  if (typeof run !== "function") throw new ValidationError(`Tool "${name}" needs a run function.`);
  if (definition.workflow !== undefined && typeof definition.workflow !== "function") throw new ValidationError(`Tool "${name}": workflow must be a function.`);
  if (effect === "reversible" && typeof definition.compensate !== "function") {
    throw new ValidationError(`Tool "${name}" is reversible: give it a compensate function.`);
  }
  let inputSchema: Record<string, JsonValue>;
  try {
    inputSchema = z.toJSONSchema(input, { io: "input", unrepresentable: "any" }) as Record<string, JsonValue>;
  } catch (error) {
    throw new ValidationError(`Tool "${name}": its input schema has no JSON Schema form (${(error as Error).message}).`);
  }
  delete inputSchema.$schema;
  let outputSchema: Record<string, JsonValue> = {};
  if (definition.output) {
    try {
      outputSchema = z.toJSONSchema(definition.output, { io: "output", unrepresentable: "any" }) as Record<string, JsonValue>;
    } catch (error) {
      throw new ValidationError(`Tool "${name}": its output schema has no JSON Schema form (${(error as Error).message}).`);
    }
    delete outputSchema.$schema;
  }
  const approval = definition.approval;
  const approvalPolicy = approval === true ? {} : approval && typeof approval === "object" ? approval : null;
  return Object.freeze({ ...definition, spec: { name, description, inputSchema }, approvalPolicy, outputSchema });
}

/**
 * A zod 4 schema, or a clear error: a zod 3 schema (`import { z } from "zod"` with zod 3 installed)
 * has `_def` but not zod 4's `_zod`, and would otherwise be called "not a zod schema".
 */
function checkZod(tool: string, field: "input" | "output", schema: unknown): void {
  if (schema instanceof z.ZodType) return;
  const looksLikeZod3 = !!schema && typeof schema === "object" && "_def" in schema && !("_zod" in schema) && "safeParse" in schema;
  if (looksLikeZod3)
    throw new ValidationError(
      `Tool "${tool}": its ${field} is a zod 3 schema; zod 4 (or \`zod/v4\`, which zod 3.25+ also ships) is required: install zod@4, or import { z } from "zod/v4".`,
    );
  throw new ValidationError(`Tool "${tool}": ${field} must be a zod schema (zod 4 or \`zod/v4\`).`);
}

/** JSON with object keys sorted at every level: the same arguments always give the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** `sha256:<hex>` of the canonical JSON of a call's arguments: what an approval is bound to. */
export function argumentsHash(args: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(args)).digest("hex")}`;
}

/** The text the model sees for a tool's output. */
export function formatOutput<O>(tool: Tool<unknown, O>, output: O): string {
  if (tool.format) return tool.format(output);
  if (typeof output === "string") return output;
  return output === undefined ? "" : JSON.stringify(output);
}

/** Reads a zod error as one line the model can act on. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(arguments)"}: ${issue.message}`).join("; ");
}
