import { z } from "zod";
import { ValidationError } from "../core/errors.js";
import type { Workflow } from "../engine/workflow.js";
import type { AgentInput, AgentResult } from "./agent.js";
import { PLAN_ID, type PlanState } from "./plan-graph.js";
import { Plan, type DepResults, type PlanNode, type PlanResult } from "./plan.js";
import { defineTool, describeIssues, formatOutput, type Tool, type WorkflowToolContext } from "./tool.js";

/** What {@link planTool} takes. */
export interface PlanToolOptions {
  /** The tools a plan's nodes may call (by name, with arguments). Tools that need approval are refused. */
  tools?: Tool[];
  /** Runs nodes that give a `prompt` instead of a tool: each such node is a child run of this agent. */
  agent?: Workflow<AgentInput, AgentResult>;
  /** The tool's name. Default "plan". */
  name?: string;
  /** Plan names are `<planName>`, then `<planName>-2`, … for later plans of the run. Default "agent". */
  planName?: string;
  /** At most this many nodes per wave. Default: no limit. */
  maxConcurrency?: number;
  /** At most this many characters of each node's result in what the model sees. Default 500. */
  maxResultChars?: number;
}

const nodeSchema = z.object({
  id: z.string().regex(PLAN_ID).describe("Unique id: letters, digits, _ or -."),
  deps: z.array(z.string()).optional().describe("Ids of nodes that must be done first."),
  tool: z.string().optional().describe("The tool this node calls."),
  input: z.record(z.string(), z.unknown()).optional().describe("The tool's arguments."),
  prompt: z.string().optional().describe("Instead of a tool: a task for a sub-agent; it sees the results of the node's deps."),
  note: z.string().max(2000).optional().describe("A note to keep with the task (what you learned, what to check): shown with the plan every time."),
});

const inputSchema = z.object({
  action: z
    .enum(["create", "revise", "run", "status"])
    .describe("create: a new plan from nodes; revise: add nodes, remove or reorder pending ones; run: run waves; status: report only."),
  nodes: z.array(nodeSchema).optional().describe("create: the plan's nodes. revise: nodes to add."),
  remove: z.array(z.string()).optional().describe("revise: pending nodes to remove."),
  order: z.array(z.string()).optional().describe("revise: pending nodes in their new order (which start first)."),
  notes: z
    .record(z.string(), z.string().max(2000))
    .optional()
    .describe("revise: notes to attach to tasks (any status), by id; they stay with the plan even when the conversation is summarized."),
  waves: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("How many waves of ready nodes to run after this action (each wave runs its nodes in parallel). Default: run to the end. 0: run nothing."),
});

type PlanToolInput = z.infer<typeof inputSchema>;
type NodeInput = z.infer<typeof nodeSchema>;

/** What the plan tool keeps in the agent's state between calls. */
interface PlanToolState {
  plans: number;
  plan: PlanState;
  nodes: Record<string, NodeInput>;
}

/**
 * A tool with which a model plans: it creates a DAG of tasks (each a call of one of `tools`, or
 * a prompt for a sub-agent run as a child), runs it in waves of parallel nodes, sees every
 * node's status and result, and revises the pending part (add, remove, reorder) between waves.
 * The plan, each revision and each node are journaled ops (see {@link runPlan}), so a crashed
 * agent resumes its plan without running a finished node again, and `cairn show` draws it.
 * Give it to {@link defineAgent} with the tools it may call.
 * @example
 * const tools = [search, fetchPage];
 * const researcher = defineAgent({ name: "researcher", model, tools: [...tools, planTool({ tools, agent: helper })] });
 */
export function planTool(options: PlanToolOptions = {}): Tool<PlanToolInput, string> {
  const toolName = options.name ?? "plan";
  const base = options.planName ?? "agent";
  if (!PLAN_ID.test(base)) throw new ValidationError(`planTool: planName ${JSON.stringify(base)} is invalid: use letters, digits, _ or -.`);
  const tools = new Map<string, Tool>();
  for (const tool of options.tools ?? []) {
    if (!tool?.spec) throw new ValidationError(`planTool: tools must be made with defineTool.`);
    if (tool.approvalPolicy)
      throw new ValidationError(`planTool: tool "${tool.name}" needs approval, which plan nodes do not ask for yet; leave it out of the plan.`);
    if (tool.workflow) throw new ValidationError(`planTool: tool "${tool.name}" runs as workflow code; plan nodes call only step tools.`);
    tools.set(tool.name, tool);
  }
  const maxChars = options.maxResultChars ?? 500;
  const planOptions = options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency };

  const toNode = (planName: string, runId: string, input: NodeInput): PlanNode => {
    const deps = input.deps ?? [];
    if ((input.tool === undefined) === (input.prompt === undefined)) {
      throw new ValidationError(`Node "${input.id}" needs either a tool (with input) or a prompt.`);
    }
    if (input.prompt !== undefined) {
      const agent = options.agent;
      if (!agent) throw new ValidationError(`Node "${input.id}": prompt nodes are not available here; call a tool instead.`);
      const prompt = input.prompt;
      return {
        id: input.id,
        deps,
        workflow: agent,
        label: `${agent.name}: ${prompt.slice(0, 60)}`,
        input: (results: DepResults) => ({ prompt: withDeps(prompt, results) }),
      };
    }
    const tool = tools.get(input.tool!);
    if (!tool) throw new ValidationError(`Node "${input.id}": there is no tool named "${input.tool}". Available: ${[...tools.keys()].join(", ") || "none"}.`);
    const parsed = tool.input.safeParse(input.input ?? {});
    if (!parsed.success) throw new ValidationError(`Node "${input.id}": invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}`);
    const args: unknown = parsed.data;
    const idempotencyKey = `${runId}:plan:${planName}:${input.id}`;
    return {
      id: input.id,
      deps,
      label: `${tool.name} ${JSON.stringify(args).slice(0, 60)}`,
      run: (_deps, info) =>
        tool.run(args, { idempotencyKey, toolCallId: `plan-${input.id}`, runId, attempt: info.attempt, signal: info.signal, heartbeat: info.heartbeat }),
      options: {
        effect: tool.effect,
        ...(tool.retry === undefined ? {} : { retry: tool.retry }),
        ...(tool.timeout === undefined ? {} : { timeout: tool.timeout }),
        ...(tool.reconcile ? { reconcile: () => tool.reconcile!(args, idempotencyKey) } : {}),
        ...(tool.compensate ? { compensate: (result: unknown) => tool.compensate!(args, result, idempotencyKey) } : {}),
      },
    };
  };

  const format = (result: PlanResult, state: PlanState, byId: Record<string, NodeInput>): string => {
    const counts = new Map<string, number>();
    for (const node of state.nodes) counts.set(node.status, (counts.get(node.status) ?? 0) + 1);
    const lines = [`Plan "${state.name}" (revision ${state.revision}): ${[...counts].map(([status, n]) => `${n} ${status}`).join(", ")}.`];
    for (const node of state.nodes) {
      const out = result.nodes[node.id]!;
      let line = `- ${node.id} [${out.status}]${node.deps.length ? ` after ${node.deps.join(", ")}` : ""}`;
      if (out.status === "done") line += `: ${truncate(resultText(byId[node.id], out.result), maxChars)}`;
      if (out.status === "failed" && out.error) line += `: ${out.error.name}: ${truncate(out.error.message, maxChars)}`;
      if (out.status === "skipped") line += ` (because ${out.skippedBecause ?? "a dependency"} did not succeed)`;
      const note = byId[node.id]?.note;
      if (note) line += `\n  note: ${note}`;
      lines.push(line);
    }
    return lines.join("\n");
  };

  const resultText = (input: NodeInput | undefined, result: unknown): string => {
    const tool = input?.tool === undefined ? undefined : tools.get(input.tool);
    if (tool) return formatOutput(tool, result);
    const text = (result as AgentResult | undefined)?.text;
    return typeof text === "string" ? text : (JSON.stringify(result) ?? "");
  };

  const workflow = async (input: PlanToolInput, context: WorkflowToolContext): Promise<string> => {
    const { ctx, runId } = context;
    const saved = context.state as PlanToolState | undefined;
    const waves = input.waves;
    let plan: Plan;
    let byId: Record<string, NodeInput>;
    let plans = saved?.plans ?? 0;
    if (input.action === "create") {
      if (saved && !planFinished(saved.plan)) {
        throw new ValidationError(`Plan "${saved.plan.name}" is not finished: revise it (remove its pending nodes) or run it first.`);
      }
      if (!input.nodes?.length) throw new ValidationError(`create needs nodes.`);
      plans += 1;
      const planName = plans === 1 ? base : `${base}-${plans}`;
      byId = Object.fromEntries(input.nodes.map((node) => [node.id, node]));
      plan = await Plan.create(
        ctx,
        planName,
        input.nodes.map((node) => toNode(planName, runId, node)),
        planOptions,
      );
    } else {
      if (!saved) throw new ValidationError(`There is no plan yet: create one first.`);
      byId = { ...saved.nodes };
      const planName = saved.plan.name;
      plan = Plan.resume(
        ctx,
        saved.plan,
        saved.plan.nodes.map((node) => toNode(planName, runId, byId[node.id]!)),
        planOptions,
      );
      if (input.action === "revise") {
        const add = (input.nodes ?? []).map((node) => toNode(planName, runId, node));
        // Notes alone change no node: they need no journaled revision.
        if (add.length > 0 || input.remove || input.order) {
          await plan.revise({
            ...(add.length ? { add } : {}),
            ...(input.remove ? { remove: input.remove } : {}),
            ...(input.order ? { order: input.order } : {}),
          });
        }
        for (const node of input.nodes ?? []) byId[node.id] = node;
        for (const id of input.remove ?? []) delete byId[id];
        for (const [id, note] of Object.entries(input.notes ?? {})) {
          const node = byId[id];
          if (!node) throw new ValidationError(`notes: there is no task "${id}" in plan "${planName}".`);
          byId[id] = { ...node, note };
        }
      }
    }
    const save = () => context.setState({ plans, plan: plan.state, nodes: byId } satisfies PlanToolState);
    save();
    const result = input.action === "status" || waves === 0 ? plan.result() : await plan.run(waves === undefined ? {} : { waves });
    save();
    return format(result, plan.state, byId);
  };

  return defineTool<PlanToolInput, string>({
    name: toolName,
    description:
      "Plan work as a graph of tasks with dependencies and run it: ready tasks run in parallel, a failed task skips the tasks that depend on it, " +
      "and you see every task's status and result. Create a plan, run it (all at once or a few waves at a time), and revise its pending tasks between waves.",
    input: inputSchema,
    effect: "none",
    run: () => {
      throw new ValidationError(`The ${toolName} tool runs as workflow code inside defineAgent, not on its own.`);
    },
    workflow,
  });
}

function planFinished(state: PlanState): boolean {
  return state.nodes.every((node) => node.status !== "pending" && node.status !== "running");
}

function withDeps(prompt: string, results: DepResults): string {
  const entries = Object.entries(results);
  if (entries.length === 0) return prompt;
  const parts = entries.map(([id, result]) => {
    const text = (result as AgentResult | undefined)?.text;
    return `## ${id}\n${typeof text === "string" ? text : JSON.stringify(result)}`;
  });
  return `${prompt}\n\nResults of the tasks this one depends on:\n\n${parts.join("\n\n")}`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
