import { NonDeterminismError, ValidationError, isCairnError, type StepFailedError, type RunFailedError } from "../core/errors.js";
import { serializeError, type SerializedError } from "../core/serialize.js";
import type { StepInfo, StepOptions, Workflow, WorkflowContext } from "../engine/workflow.js";
import { canonicalJson } from "./tool.js";
import {
  applyEdit,
  checkEdit,
  checkPlan,
  checkPlanName,
  initialState,
  planOps,
  propagateSkips,
  readyNodes,
  type PlanIntent,
  type PlanNodeSpec,
  type PlanNodeState,
  type PlanNodeStatus,
  type PlanState,
} from "./plan-graph.js";

/** The results of a node's dependencies, by dependency id. */
export type DepResults = Record<string, unknown>;

/** A node that runs as a step of this run: `run` is the step's function. */
export interface StepPlanNode<T = unknown> {
  /** Letters, digits, `_` and `-`; unique in the plan for its whole life. */
  id: string;
  /** Nodes that must be done first; their results are passed to `run`. */
  deps?: string[];
  run(deps: DepResults, info: StepInfo): Promise<T> | T;
  /** Step options (retry, timeout, effect, compensate, reconcile). The intent is set by the plan. */
  options?: Omit<StepOptions<T>, "intent">;
  /** Shown by `cairn show`. */
  label?: string;
}

/** A node that runs as a child run of `workflow`. */
export interface ChildPlanNode<I = any, O = unknown> {
  id: string;
  deps?: string[];
  workflow: Workflow<I, O>;
  /** The child's input, or a function of the dependencies' results that makes it. */
  input: I | ((deps: DepResults) => I);
  /** The child's run id; default `<parentRunId>/<op key>`. */
  runId?: string;
  label?: string;
}

/** A node of a plan: a step or a child run, with the ids it depends on. */
export type PlanNode = StepPlanNode | ChildPlanNode;

/** An edit to a running plan: see `PlanEditSpec` for the rules. */
export interface PlanEdit {
  add?: PlanNode[];
  remove?: string[];
  order?: string[];
}

/** Decides, after a wave, whether and how to revise the plan. Workflow code: may issue ops on ctx. */
export type PlanReviser = (plan: Plan) => PlanEdit | undefined | Promise<PlanEdit | undefined>;

/** Options of {@link runPlan} and {@link Plan.run}. */
export interface PlanOptions {
  /** At most this many nodes per wave (the first ready ones in plan order). Default: no limit. */
  maxConcurrency?: number;
  /** Called after every wave; an edit it returns is journaled and applied before the next wave. */
  revise?: PlanReviser;
}

/** One node's outcome. */
export interface PlanNodeResult {
  status: PlanNodeStatus;
  result?: unknown;
  error?: SerializedError;
  /** For skipped nodes: the dependency that failed or was skipped. */
  skippedBecause?: string;
}

/** What a plan run resolves to. */
export interface PlanResult {
  /** True when every node is done. */
  ok: boolean;
  /** Every node of the plan, in plan order. */
  nodes: Record<string, PlanNodeResult>;
  /** Revisions applied. */
  revision: number;
}

const isChild = (node: PlanNode): node is ChildPlanNode => "workflow" in node && node.workflow !== undefined;

/** The journaled, function-free form of a node. */
function specOf(node: PlanNode): PlanNodeSpec {
  if (!node || typeof node !== "object") throw new ValidationError("Every plan node must be an object with an id.");
  const spec: PlanNodeSpec = { id: node.id, deps: node.deps ?? [], kind: isChild(node) ? "child" : "step" };
  if (isChild(node)) {
    if (typeof node.workflow.name !== "string" || typeof node.workflow.run !== "function") {
      throw new ValidationError(`Plan node "${node.id}": workflow must be made with defineWorkflow.`);
    }
    spec.workflow = node.workflow.name;
  } else if (typeof (node as StepPlanNode).run !== "function") {
    throw new ValidationError(`Plan node "${node.id}" needs a run function, or a workflow and input.`);
  }
  if (node.label !== undefined) spec.label = node.label;
  return spec;
}

/**
 * A plan: a DAG of nodes run in waves. Each wave starts every ready node (pending, with all its
 * dependencies done) at once, in plan order, and waits for all of them. A node that fails marks
 * its transitive dependents skipped; independent branches go on. The plan and every revision
 * are journaled as steps (`plan-<name>`, `plan-<name>~rev`), each node is a step or child op
 * (`plan-<name>:<id>`), and waves are computed only from those journaled outcomes, so a replay
 * runs the same waves and runs nothing twice.
 * @example
 * const plan = await createPlan(ctx, "research", [
 *   { id: "a", run: () => search("a") },
 *   { id: "b", run: () => search("b") },
 *   { id: "merge", deps: ["a", "b"], run: (deps) => merge(deps.a, deps.b) },
 * ]);
 * await plan.runWave();                                   // a and b, in parallel
 * await plan.revise({ add: [{ id: "c", deps: ["a"], run: (d) => followUp(d.a) }] });
 * const result = await plan.run();                        // merge and c
 */
export class Plan {
  private current: PlanState;
  private readonly nodes = new Map<string, PlanNode>();
  private running = false;

  private constructor(
    private readonly ctx: WorkflowContext,
    state: PlanState,
    nodes: readonly PlanNode[],
    private readonly maxConcurrency: number | undefined,
  ) {
    this.current = state;
    for (const node of nodes) this.nodes.set(node.id, node);
  }

  /** Journals a new plan (validated first: unique ids, known deps, no cycle) and returns it. Nothing runs yet. */
  static async create(ctx: WorkflowContext, name: string, nodes: readonly PlanNode[], options: Pick<PlanOptions, "maxConcurrency"> = {}): Promise<Plan> {
    checkPlanName(name);
    if (!Array.isArray(nodes)) throw new ValidationError(`Plan "${name}" needs an array of nodes.`);
    const specs = checkPlan(name, nodes.map(specOf));
    const maxConcurrency = checkConcurrency(name, options.maxConcurrency);
    const intent: PlanIntent = { cairnPlan: name, action: "create" };
    const journaled = await ctx.step(planOps.created(name), () => ({ nodes: specs }), { effect: "none", intent });
    sameAsJournaled(planOps.created(name), journaled, { nodes: specs });
    return new Plan(ctx, initialState(name, specs), nodes, maxConcurrency);
  }

  /**
   * Picks up a plan from a state saved earlier in this run (e.g. in a loop's state), with the
   * nodes that run its pending ids. Journals nothing: the plan and its revisions already are.
   */
  static resume(ctx: WorkflowContext, state: PlanState, nodes: readonly PlanNode[], options: Pick<PlanOptions, "maxConcurrency"> = {}): Plan {
    const copy = structuredClone(state);
    // A node that was running when the state was saved never settled there: it runs (or replays) again.
    for (const node of copy.nodes) if (node.status === "running") node.status = "pending";
    return new Plan(ctx, copy, nodes, checkConcurrency(state.name, options.maxConcurrency));
  }

  /** The plan's name. */
  get name(): string {
    return this.current.name;
  }

  /** A copy of the whole state: nodes in plan order with statuses and results. */
  get state(): PlanState {
    return structuredClone(this.current);
  }

  /** One node's status, or undefined when there is no such node. */
  status(id: string): PlanNodeStatus | undefined {
    return this.current.nodes.find((node) => node.id === id)?.status;
  }

  /** True when no node is pending or running. */
  get finished(): boolean {
    return this.current.nodes.every((node) => node.status !== "pending" && node.status !== "running");
  }

  /**
   * Revises the plan between waves: adds nodes, removes or reorders pending ones. The edit is
   * checked first (a ValidationError names the node when it touches a running, done, failed or
   * skipped one, reuses an id, or makes a cycle), then journaled as a `plan-<name>~rev` step.
   */
  async revise(edit: PlanEdit): Promise<void> {
    if (this.running) throw new ValidationError(`Plan "${this.name}": revise between waves, not while one runs.`);
    const name = this.name;
    if (!edit || typeof edit !== "object") throw new ValidationError(`Plan "${name}": an edit is an object with add, remove and/or order.`);
    const spec = checkEdit(name, { ...edit, ...(edit.add ? { add: edit.add.map(specOf) } : {}) });
    const next = applyEdit(this.current, spec);
    const intent: PlanIntent = { cairnPlan: name, action: "revise", revision: next.revision };
    const journaled = await this.ctx.step(planOps.revised(name), () => spec, { effect: "none", intent });
    sameAsJournaled(planOps.revised(name), journaled, spec);
    for (const node of edit.add ?? []) this.nodes.set(node.id, node);
    this.current = next;
  }

  /** Runs one wave: every ready node at once (up to `maxConcurrency`). Resolves to how many ran; 0 when none was ready. */
  async runWave(): Promise<number> {
    if (this.running) throw new ValidationError(`Plan "${this.name}": a wave is already running.`);
    let ready = readyNodes(this.current);
    if (this.maxConcurrency !== undefined) ready = ready.slice(0, this.maxConcurrency);
    if (ready.length === 0) return 0;
    this.running = true;
    try {
      for (const node of ready) node.status = "running";
      await Promise.all(ready.map((node) => this.runNode(node)));
    } finally {
      this.running = false;
    }
    return ready.length;
  }

  /** Runs waves until nothing is ready (or `waves` have run), calling `revise` after each; resolves to the result. */
  async run(options: { waves?: number; revise?: PlanReviser } = {}): Promise<PlanResult> {
    const waves = options.waves ?? Infinity;
    for (let wave = 0; wave < waves; wave++) {
      if ((await this.runWave()) === 0) break;
      const edit = options.revise ? await options.revise(this) : undefined;
      if (edit) await this.revise(edit);
    }
    return this.result();
  }

  /** Every node's status and result or error, as of now. */
  result(): PlanResult {
    const nodes: Record<string, PlanNodeResult> = {};
    for (const node of this.current.nodes) {
      const out: PlanNodeResult = { status: node.status };
      if (node.status === "done") out.result = node.result;
      if (node.error) out.error = node.error;
      if (node.skippedBecause) out.skippedBecause = node.skippedBecause;
      nodes[node.id] = structuredClone(out);
    }
    return { ok: this.current.nodes.every((node) => node.status === "done"), nodes, revision: this.current.revision };
  }

  private async runNode(state: PlanNodeState): Promise<void> {
    const node = this.nodes.get(state.id);
    if (!node) throw new ValidationError(`Plan "${this.name}": no code was given for node "${state.id}".`);
    const deps: DepResults = {};
    for (const dep of state.deps) deps[dep] = this.current.nodes.find((other) => other.id === dep)?.result;
    const op = planOps.node(this.name, state.id);
    try {
      if (isChild(node)) {
        const input: unknown = typeof node.input === "function" ? (node.input as (d: DepResults) => unknown)(deps) : node.input;
        state.result = await this.ctx.child(node.workflow, input, { name: op, ...(node.runId === undefined ? {} : { runId: node.runId }) });
      } else {
        const step = node;
        state.result = await this.ctx.step(op, (info) => step.run(deps, info), { ...step.options, intent: { cairnPlan: this.name, node: state.id } });
      }
      state.status = "done";
    } catch (error) {
      const failure = nodeFailure(error);
      if (!failure) throw error;
      state.status = "failed";
      state.error = failure;
      propagateSkips(this.current);
    }
  }
}

/** The journaled error of a node that failed for good; null for errors that must end the run (lease lost, divergence). */
function nodeFailure(error: unknown): SerializedError | null {
  if (isCairnError(error, "STEP_FAILED")) return (error as StepFailedError).failure;
  if (isCairnError(error, "RUN_FAILED")) return (error as RunFailedError).error;
  if (isCairnError(error, "RUN_CANCELLED")) return serializeError(error);
  return null;
}

function checkConcurrency(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 1) throw new ValidationError(`Plan "${name}": maxConcurrency must be a whole number ≥ 1 (got ${String(value)}).`);
  return value;
}

/** The code on replay must describe the plan the journal holds. */
function sameAsJournaled(op: string, journaled: unknown, now: unknown): void {
  const a = canonicalJson(journaled);
  const b = canonicalJson(now);
  if (a !== b) throw new NonDeterminismError(op, `the plan ${a.slice(0, 200)}`, `describes ${b.slice(0, 200)}`);
}

/**
 * Creates a plan and runs it to the end: waves of ready nodes in parallel, failures skipping
 * their dependents, `options.revise` consulted after every wave. Resolves to every node's status
 * and result; it rejects only for invalid plans or edits and for errors that end the run.
 * @example
 * const { nodes } = await runPlan(ctx, "release", [
 *   { id: "build", run: () => build() },
 *   { id: "test", deps: ["build"], run: (d) => test(d.build) },
 *   { id: "docs", run: () => docs() },
 *   { id: "publish", deps: ["test", "docs"], workflow: publish, input: (d) => ({ artifact: d.build }) },
 * ]);
 * if (nodes.test.status === "failed") ctx.log.warn("not published", { error: nodes.test.error });
 */
export async function runPlan(ctx: WorkflowContext, name: string, nodes: readonly PlanNode[], options: PlanOptions = {}): Promise<PlanResult> {
  const plan = await Plan.create(ctx, name, nodes, options);
  return plan.run(options.revise ? { revise: options.revise } : {});
}

/** Same as {@link Plan.create}: journals a plan and returns it, to run wave by wave and revise in between. */
export function createPlan(ctx: WorkflowContext, name: string, nodes: readonly PlanNode[], options: Pick<PlanOptions, "maxConcurrency"> = {}): Promise<Plan> {
  return Plan.create(ctx, name, nodes, options);
}
