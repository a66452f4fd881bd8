import { ValidationError } from "../core/errors.js";
import type { EntryData } from "../core/journal.js";
import type { AgentMessageRow } from "../core/store/agent-rows.js";
import type { WorkflowContext } from "./workflow.js";

/**
 * What the agent layer does on a workflow context beyond the public `ctx`: journal an agent's
 * messages (an `agent.messages` entry, projected onto the `agent_messages` / `tool_calls` rows in
 * the same commit) and read its message rows back, so loop snapshots refer to the transcript by
 * message seq instead of carrying it.
 */
export interface AgentRowOps {
  /**
   * Journals `data` as op `name` (an `agent.messages` entry), queued behind what the run wrote
   * before, so it commits before anything the run does next. On replay the journaled entry stands
   * and nothing is written (the op key is checked like any op's).
   */
  append(name: string, data: EntryData["agent.messages"]): void;
  /** The run's message rows with `fromSeq ≤ seq ≤ throughSeq`, in seq order: rows of committed entries only. */
  read(fromSeq: number, throughSeq: number): Promise<AgentMessageRow[]>;
}

const registry = new WeakMap<WorkflowContext, AgentRowOps>();

/** Attaches the agent row ops to a context the engine made. */
export function registerAgentRowOps(ctx: WorkflowContext, ops: AgentRowOps): void {
  registry.set(ctx, ops);
}

/** The agent row ops of `ctx`; throws when `ctx` was not made by the engine (agents run only as workflows of an engine). */
export function agentRowOps(ctx: WorkflowContext): AgentRowOps {
  const ops = registry.get(ctx);
  if (!ops) throw new ValidationError("This workflow context was not made by a Cairn engine: agents run as workflows of an engine (engine.start / replay).");
  return ops;
}
