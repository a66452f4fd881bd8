import { z } from "zod";
import { isCairnError, ValidationError } from "../core/errors.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import type { Engine } from "../engine/engine.js";
import type { Workflow } from "../engine/workflow.js";
import type { AgentInput, AgentResult } from "./agent.js";
import { MessageSchema, type Message } from "./model/schemas.js";

/** What a thread run keeps: the conversation so far, across every turn. */
export interface ThreadState {
  messages: Message[];
  /** The agent's working memory, carried from turn to turn. */
  memory?: Record<string, unknown>;
  /** Turns the thread has taken, counting those of the runs it continued from. */
  turns: number;
}

/**
 * The input of a thread run: nothing for a new thread (or `messages` to start from). A run the thread
 * continued as (`continueAfterTurns`) starts from what the last one carried over: the transcript and
 * memory its last turn left, the turn count and the thread's id.
 */
export interface ThreadInput {
  messages?: Message[];
  memory?: Record<string, unknown>;
  turns?: number;
  /** The id the thread is known by (its first run's id): turns run as `<threadId>:<turnId>` whichever run of the chain takes them. */
  threadId?: string;
}

/** How a thread runs. */
export interface ThreadOptions {
  /** The thread workflow's name. Default `<agent>.thread`. */
  name?: string;
  /** Loop snapshots every this many messages (ctx.loop `snapshotEvery`). Default 1. */
  snapshotEvery?: number;
  /**
   * Continue as new (`ctx.continueAsNew`) after a turn once a run of the thread has taken this many
   * messages (turns, failed or not, and dropped messages alike): the next run (`<threadId>~2`, `~3`, …)
   * starts from the transcript the last turn left (as the agent's `context` policy summarized it), its
   * memory and the turn count, so no run's journal grows with the whole conversation (the transcript
   * itself is as long as the agent keeps it). Messages sent to the thread's id reach the live run, and
   * `sendToThread`'s turn ids and results are unchanged. Default: never (one run keeps the whole
   * conversation, as before this option; docs/live-runs.md says why).
   */
  continueAfterTurns?: number;
}

/** A message sent to a thread: the event `message`, whose `turnId` names the turn's run. */
export interface ThreadMessage {
  prompt: string;
  /** Letters, digits, `.`, `_` and `-`; the turn runs as `<threadId>:<turnId>`. */
  turnId: string;
}

const TURN_ID = /^[A-Za-z0-9._-]{1,128}$/;
const ThreadMessageSchema = z.object({ prompt: z.string().min(1), turnId: z.string().regex(TURN_ID) }).strict();
const CloseSchema = z.object({ close: z.literal(true) }).strict();
const ThreadInputSchema = z.object({
  messages: z.array(MessageSchema).optional(),
  memory: z.record(z.string(), z.unknown()).optional(),
  turns: z.number().int().min(0).optional(),
  threadId: z.string().min(1).optional(),
});

/**
 * A conversation that spans runs: a long-lived thread run keeps the history and, for each message it
 * receives, runs one turn of `agent` as a child run (`<threadId>:<turnId>`) on the whole conversation,
 * then keeps the transcript that turn ended with (summaries included). Between messages the thread is
 * suspended and holds nothing. Talk to it with {@link sendToThread}. With `continueAfterTurns` the
 * thread continues as a fresh run every so many turns, carrying its transcript and memory (see
 * {@link ThreadOptions}).
 * @example
 * const support = defineThread(supportAgent, { continueAfterTurns: 100 }); // register both with the engine
 * const turn = await sendToThread(engine, support, "customer-42", "My invoice is wrong.");
 * const reply = await turn.result();                                         // AgentResult of that turn
 */
export function defineThread(agent: Workflow<AgentInput, AgentResult>, options: ThreadOptions = {}): Workflow<ThreadInput, ThreadState> {
  const limit = options.continueAfterTurns;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1)) {
    throw new ValidationError(`defineThread(${agent.name}): continueAfterTurns must be a whole number of turns, 1 or more (got ${String(limit)}).`);
  }
  return defineWorkflow<ThreadInput, ThreadState>({
    name: options.name ?? `${agent.name}.thread`,
    version: agent.version,
    async run(ctx, input) {
      const start = ThreadInputSchema.parse(input ?? {});
      // A run of the thread's chain (`<threadId>~n`) names turns by the thread; any other run (the first,
      // or a fork of a continued run) by itself.
      const threadId = start.threadId !== undefined && ctx.runId.startsWith(`${start.threadId}~`) ? start.threadId : ctx.runId;
      const initial: ThreadState = { messages: start.messages ?? [], turns: start.turns ?? 0 };
      if (start.memory !== undefined) initial.memory = start.memory;
      return ctx.loop(
        "message",
        initial,
        async (state, it) => {
          const event = await it.ctx.waitForEvent<unknown>("message");
          if (CloseSchema.safeParse(event).success) return it.done(state);
          const parsed = ThreadMessageSchema.safeParse(event);
          // A malformed message is dropped: the thread must outlive a bad client.
          if (!parsed.success) return state;
          const { prompt, turnId } = parsed.data;
          const messages: Message[] = [...state.messages, { role: "user", content: prompt }];
          let next = state;
          try {
            const result = await it.ctx.child(agent, { messages, memory: state.memory ?? {} }, { runId: `${threadId}:${turnId}`, name: "turn" });
            next = { messages: result.messages, memory: result.memory, turns: state.turns + 1 };
          } catch (error) {
            // A failed turn leaves the conversation as it was; the turn's run holds the error. A turn id an
            // earlier message took (sent again under another event id) is dropped: its run has the answer.
            if (!isCairnError(error, "RUN_FAILED") && !isCairnError(error, "RUN_CANCELLED") && !isCairnError(error, "RUN_CONFLICT")) throw error;
          }
          // `it.index` counts the messages this run took: a failed turn costs journal too. While the journal
          // still holds later iterations (taken before the limit was set), replay goes on: it stays exact.
          if (limit !== undefined && it.index + 1 >= limit && !it.ctx.replaying) {
            const carried: ThreadInput = { messages: next.messages, turns: next.turns, threadId };
            if (next.memory !== undefined) carried.memory = next.memory;
            return it.ctx.continueAsNew(carried);
          }
          return next;
        },
        { snapshotEvery: options.snapshotEvery ?? 1 },
      );
    },
  });
}

/**
 * Sends a message to a thread (starting the thread run if needed) and returns the turn's run id and
 * its result. Idempotent by `turnId` (default: a fresh id): sending the same turn twice runs it once.
 */
export async function sendToThread(
  engine: Engine,
  thread: Workflow<ThreadInput, ThreadState>,
  threadId: string,
  prompt: string,
  options: { turnId?: string; timeoutMs?: number } = {},
): Promise<{ runId: string; result(): Promise<AgentResult> }> {
  const turnId = options.turnId ?? globalThis.crypto.randomUUID();
  const message = ThreadMessageSchema.safeParse({ prompt, turnId });
  if (!message.success) throw new ValidationError(`sendToThread: a non-empty prompt and a turnId of letters, digits, ".", "_" or "-" are required.`);
  await engine.start(thread, {}, { runId: threadId });
  await engine.sendEvent(threadId, "message", message.data, { eventId: `turn:${turnId}` });
  const runId = `${threadId}:${turnId}`;
  return {
    runId,
    async result() {
      // The caller's side, not workflow code: real time is right here.
      // eslint-disable-next-line no-restricted-properties
      const deadline = Date.now() + (options.timeoutMs ?? 600_000);
      // The turn's run exists once the thread has taken the message.
      for (;;) {
        try {
          // eslint-disable-next-line no-restricted-properties
          return await engine.result<AgentResult>(runId, { timeoutMs: Math.max(1, deadline - Date.now()) });
        } catch (error) {
          // eslint-disable-next-line no-restricted-properties
          if (!isCairnError(error, "RUN_NOT_FOUND") || Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    },
  };
}
