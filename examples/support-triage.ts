/**
 * A support-triage agent on real providers: a customer's bug report arrives with a screenshot; the
 * agent looks at the image, may search the web with the provider's own search tool, files one ticket
 * with the `file_ticket` tool, and answers the customer. What it shows:
 *
 * - **Real SDKs.** The primary model is OpenAI (Responses API, `openai` SDK); when OpenAI is down
 *   (5xx, 429, timeouts, a cut stream) after the retry policy, the call falls back to Anthropic
 *   (`@anthropic-ai/sdk`). Each SDK reads its key and base URL from the environment
 *   (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`).
 * - **Images** in the user turn, by URL (the journal holds the URL, not the bytes).
 * - **Provider-hosted tools**: each provider gets its own web search; what it ran is journaled as
 *   `hosted_tool` blocks and shown by `cairn show` and the dashboard.
 * - **Streaming to a client**: {@link followAnswer} follows the run over HTTP with `CairnClient` and
 *   writes the answer as the model generates it, then returns the journaled result.
 *
 * Every model call and the ticket are journaled steps: a crash never re-sends an answered call and
 * never files the ticket twice (its idempotency key is stable across crashes).
 *
 * @example
 * // Worker side: createEngine({ store: "sqlite:cairn.db", workflows: [triager] }); then serve it.
 * const { run } = await cairn.startRun({ workflow: "triager", input: triageInput(report) });
 * const answer = await followAnswer(cairn, run.runId, (text) => process.stdout.write(text));
 */
import { anthropicModel, defineAgent, defineTool, openaiModel, type AgentInput } from "cairn/agent";
import type { CairnClient } from "cairn/client";
import { z } from "zod";
import { recordEffect } from "./ledger.js";

/** A customer's report. */
export interface BugReport {
  customer: string;
  text: string;
  /** An http(s) URL of the screenshot. */
  screenshotUrl: string;
}

/** The model ids, overridable: `TRIAGE_OPENAI_MODEL`, `TRIAGE_ANTHROPIC_MODEL`. */
export const TRIAGE_MODELS = {
  openai: () => process.env.TRIAGE_OPENAI_MODEL ?? "gpt-5-mini",
  anthropic: () => process.env.TRIAGE_ANTHROPIC_MODEL ?? "claude-sonnet-4-5",
};

/** The ticket the agent files. */
export const ticketInput = z.object({
  title: z.string().min(1).max(120).describe("One line saying what is broken."),
  severity: z.enum(["low", "medium", "high", "critical"]),
  component: z.string().min(1).describe("The product area, e.g. billing, login, editor."),
});

/** FNV-1a, so the fake tracker's ticket number depends only on the idempotency key. */
function ticketNumber(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return 1000 + (h % 9000);
}

/**
 * Files a ticket in the (fake) tracker. `idempotent`: the tracker deduplicates on the idempotency
 * key, so after a crash mid-call the step may run again and still make one ticket. Each real run of
 * the effect is written to the example ledger (`CAIRN_EXAMPLE_LEDGER`).
 */
export const fileTicket = defineTool({
  name: "file_ticket",
  description: "Files one ticket in the issue tracker for the reported bug. Call it once per report.",
  input: ticketInput,
  effect: "idempotent",
  run(ticket, { idempotencyKey }) {
    recordEffect(idempotencyKey);
    return { ticket: `SUP-${ticketNumber(idempotencyKey)}`, severity: ticket.severity };
  },
});

/**
 * The agent. Models are functions so the SDK clients are made in the worker, on first use, from
 * the worker's environment.
 */
export const triager = defineAgent({
  name: "triager",
  system:
    "You triage bug reports for a SaaS product. Look at the screenshot, search the web only for " +
    "error messages you do not recognise, file exactly one ticket with file_ticket, then answer the " +
    "customer in three sentences or fewer with the ticket number.",
  model: () => openaiModel({ model: TRIAGE_MODELS.openai() }),
  fallbacks: [() => anthropicModel({ model: TRIAGE_MODELS.anthropic(), defaultMaxTokens: 1024 })],
  providerTools: {
    openai: [{ type: "web_search" }],
    anthropic: [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }],
  },
  tools: [fileTicket],
  budget: { maxSteps: 12 },
  // Each model gets the whole policy before the next one is tried.
  retry: { maxAttempts: 2, initialDelay: "200ms" },
});

/** The agent's input for a report: text and the screenshot in one user turn. */
export function triageInput(report: BugReport): AgentInput {
  return {
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: `Customer ${report.customer} reports:\n${report.text}` },
          { type: "image", source: { type: "url", url: report.screenshotUrl }, detail: "low" },
        ],
      },
    ],
  };
}

/** What {@link followAnswer} returns. */
export interface FollowedAnswer {
  status: string;
  /** The text streamed while the model generated its final answer (the last attempt's, after a retry). */
  streamed: string;
  /** The journaled answer: the run's output text. */
  text: string;
}

/** Control characters a model could send to rewrite a terminal; tabs and newlines stay. */
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Follows a run over HTTP and writes the model's text as it is generated. Deltas are live progress,
 * not the record: a delta marked `catchUp` replaces what was written for that call (a reconnection
 * replays the output so far), and a new attempt of a call (a retry, or a worker that died
 * mid-generation) starts its text over. The journaled output, read at the end, is the truth.
 */
export async function followAnswer(client: CairnClient, runId: string, write: (text: string) => void, signal?: AbortSignal): Promise<FollowedAnswer> {
  // The text of each model call's current attempt, by op key.
  const texts = new Map<string, { attempt: number; text: string }>();
  let current = "";
  const end = await client.stream(runId, {
    ...(signal ? { signal } : {}),
    onDelta(delta) {
      const data = delta.data as { kind?: string; text?: string } | null;
      if (data?.kind !== "text" || typeof data.text !== "string") return;
      const seen = texts.get(delta.opKey);
      const restart = !seen || seen.attempt !== delta.attempt || delta.catchUp === true;
      const text = restart ? data.text : seen.text + data.text;
      texts.set(delta.opKey, { attempt: delta.attempt, text });
      if (delta.opKey !== current || restart) {
        write(`${current === "" ? "" : "\n"}`);
        current = delta.opKey;
        write(text.replace(TERMINAL_CONTROLS, ""));
      } else {
        write(data.text.replace(TERMINAL_CONTROLS, ""));
      }
    },
    onEntry: () => undefined,
  });
  const run = await client.getRun(runId);
  const output = run.output as { text?: unknown } | null | undefined;
  return {
    status: end.status ?? run.status,
    streamed: current === "" ? "" : (texts.get(current)?.text ?? ""),
    text: typeof output?.text === "string" ? output.text : "",
  };
}
