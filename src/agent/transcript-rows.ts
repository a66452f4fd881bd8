import type { AgentMessageRecord, EntryData, ToolCallRecord } from "../core/journal.js";
import { secret } from "../core/secret.js";
import { decode, encode } from "../core/serialize.js";
import { agentRowOps } from "../engine/agent-rows.js";
import type { WorkflowContext } from "../engine/workflow.js";
import type { Message, ToolResult, ToolUseBlock } from "./model/schemas.js";

/**
 * Where an agent's context window sits in its message rows (`agent_messages`): the summary row
 * `summary` (if any), then every message row with `from ≤ seq ≤ through` (older summaries in that
 * range excluded). This, not the transcript, is what a loop snapshot carries, so its size does not
 * grow with the run.
 */
export interface WindowRef {
  from: number;
  through: number;
  summary: number | null;
}

/** The window of a run that has no messages yet. */
export const EMPTY_WINDOW: WindowRef = { from: 1, through: 0, summary: null };

const sameRef = (a: WindowRef, b: WindowRef) => a.from === b.from && a.through === b.through && a.summary === b.summary;

/** A value as it reads back from its row (or journal entry): encoded and decoded once, secrets plain. */
const asStored = <T>(value: T): T => decode<T>(encode(value));

/**
 * An agent run's context window, held in memory between turns and read from the message rows when
 * the run resumes from a snapshot. Every message appended is journaled (an `agent.messages` entry)
 * and kept as it will read back, so a live run and a resumed one see the same window.
 */
export class Transcript {
  /** The window as messages with their seqs (the summary first), for the ref it belongs to. */
  private cache: { ref: WindowRef; seqs: number[]; messages: Message[] } | null = null;

  /** The window's messages: from memory, or read from the rows when this execution has not built it yet (a resume). */
  async window(ctx: WorkflowContext, ref: WindowRef): Promise<Message[]> {
    if (this.cache && sameRef(this.cache.ref, ref)) return this.cache.messages;
    if (ref.through < ref.from) {
      this.cache = { ref, seqs: [], messages: [] };
      return [];
    }
    // The summary was appended after the messages it keeps, so it lies within the range.
    const rows = await agentRowOps(ctx).read(ref.from, ref.through);
    if (rows.length !== ref.through - ref.from + 1) {
      throw new Error(`Agent run "${ctx.runId}": messages ${ref.from}…${ref.through} are missing from agent_messages (was the run's data deleted?).`);
    }
    const summary = ref.summary === null ? undefined : rows.find((row) => row.seq === ref.summary);
    if (ref.summary !== null && !summary) throw new Error(`Agent run "${ctx.runId}": summary message ${ref.summary} is missing from agent_messages.`);
    const kept = rows.filter((row) => row.kind === "message");
    const ordered = summary ? [summary, ...kept] : kept;
    this.cache = {
      ref,
      seqs: ordered.map((row) => row.seq),
      messages: ordered.map((row) => ({ role: row.role, content: decode(row.content) }) as Message),
    };
    return this.cache.messages;
  }

  /**
   * Appends messages (journaled as op `messages` of the turn) and returns the new window ref. `window`
   * must be what {@link Transcript.window} returned for `ref`. Tool calls made or answered ride along.
   */
  append(ctx: WorkflowContext, ref: WindowRef, turn: number, messages: Message[], toolCalls?: ToolCallRecord[]): WindowRef {
    const cache = this.current(ref);
    const records: AgentMessageRecord[] = messages.map((message, i) => ({ seq: ref.through + 1 + i, turn, role: message.role, content: message.content }));
    const data: EntryData["agent.messages"] = toolCalls && toolCalls.length > 0 ? { messages: records, toolCalls } : { messages: records };
    agentRowOps(ctx).append("messages", data);
    const next: WindowRef = { ...ref, through: ref.through + messages.length };
    this.cache = {
      ref: next,
      seqs: [...cache.seqs, ...records.map((r) => r.seq)],
      messages: [...cache.messages, ...records.map((r) => ({ role: r.role, content: asStored(r.content) }) as Message)],
    };
    return next;
  }

  /**
   * Replaces the window's first `cut` messages by `summary` (journaled as a summary row) and returns
   * the new ref: the summary, then the messages kept.
   */
  summarize(ctx: WorkflowContext, ref: WindowRef, turn: number, cut: number, summary: Message): WindowRef {
    const cache = this.current(ref);
    const seq = ref.through + 1;
    agentRowOps(ctx).append("messages", { messages: [{ seq, turn, role: summary.role, kind: "summary", content: summary.content }] });
    const from = cache.seqs[cut];
    if (from === undefined) throw new Error(`Agent run "${ctx.runId}": a summary cut at ${cut} leaves no message of the window.`);
    const next: WindowRef = { from, through: seq, summary: seq };
    this.cache = {
      ref: next,
      seqs: [seq, ...cache.seqs.slice(cut)],
      messages: [{ role: summary.role, content: asStored(summary.content) } as Message, ...cache.messages.slice(cut)],
    };
    return next;
  }

  private current(ref: WindowRef): { seqs: number[]; messages: Message[] } {
    if (!this.cache || !sameRef(this.cache.ref, ref)) throw new Error("Transcript.append: read the window of this ref first.");
    return this.cache;
  }
}

/** Content as the rows keep it: the arguments of secret tools' calls marked `secret()`, so every view redacts them. */
export function sealCalls(content: Message["content"], isSecret: (tool: string) => boolean): Message["content"] {
  if (!Array.isArray(content)) return content;
  return content.map((block) =>
    block.type === "tool_use" && isSecret((block as ToolUseBlock).name) ? { ...block, input: secret((block as ToolUseBlock).input) } : block,
  ) as Message["content"];
}

/** A tool message as the rows keep it: results of secret tools marked `secret()`. */
export function sealResults(results: ToolResult[], secretIds: ReadonlySet<string>): ToolResult[] {
  return results.map((result) => (secretIds.has(result.toolUseId) ? { ...result, content: secret(result.content) as unknown as string } : result));
}
