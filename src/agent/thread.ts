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
  turns: number;
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

/**
 * A conversation that spans runs: a long-lived thread run keeps the history and, for each message it
 * receives, runs one turn of `agent` as a child run (`<threadId>:<turnId>`) on the whole conversation,
 * then keeps the transcript that turn ended with (summaries included). Between messages the thread is
 * suspended and holds nothing. Talk to it with {@link sendToThread}.
 * @example
 * const support = defineThread(supportAgent);            // register both with the engine
 * const turn = await sendToThread(engine, support, "customer-42", "My invoice is wrong.");
 * const reply = await turn.result();                      // AgentResult of that turn
 */
export function defineThread(
  agent: Workflow<AgentInput, AgentResult>,
  options: { name?: string; snapshotEvery?: number } = {},
): Workflow<{ messages?: Message[] }, ThreadState> {
  return defineWorkflow<{ messages?: Message[] }, ThreadState>({
    name: options.name ?? `${agent.name}.thread`,
    version: agent.version,
    async run(ctx, input) {
      const initial: ThreadState = { messages: z.array(MessageSchema).parse(input?.messages ?? []), turns: 0 };
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
          try {
            const result = await it.ctx.child(agent, { messages, memory: state.memory ?? {} }, { runId: `${ctx.runId}:${turnId}`, name: "turn" });
            return { messages: result.messages, memory: result.memory, turns: state.turns + 1 };
          } catch (error) {
            // A failed turn leaves the conversation as it was; the turn's run holds the error.
            if (isCairnError(error, "RUN_FAILED") || isCairnError(error, "RUN_CANCELLED")) return state;
            throw error;
          }
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
  thread: Workflow<{ messages?: Message[] }, ThreadState>,
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
