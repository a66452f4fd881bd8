/**
 * The research agent of the design, on the agent layer: a model plans questions and searches them
 * all at once (several `search` calls in one turn run concurrently), drafts a summary, a person
 * reviews the draft (approve, or revise with notes; up to 72 hours), and the model writes the final
 * report from the approved draft.
 *
 * Two definitions:
 * - {@link researcher}: the agent (`defineAgent`). Every model call and every tool call is a
 *   journaled step, so a crash never repeats a finished call.
 * - {@link research}: the workflow a user starts. It runs the agent as a child run, asks the human
 *   with `ctx.askHuman`, and continues the same conversation for a revision or the report.
 *
 * The model is a real one when `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` is set (`modelFromEnv`),
 * else the scripted {@link researchModel}, which makes the example deterministic and offline.
 *
 * @example
 * const run = await engine.start(research, { topic: "solid-state batteries" }, { runId: "thread-42" });
 * // …once the run waits for its review (request id "thread-42:review#0", listed by `cairn human-requests`):
 * await engine.respondToHuman("thread-42:review#0", { action: "answer", option: "approve", by: "ada" });
 * const result = await run.result();
 */
import { defineWorkflow, isCairnError } from "cairn";
import {
  defineAgent,
  defineTool,
  modelFromEnv,
  ScriptedModel,
  textOf,
  type AgentResult,
  type Message,
  type ModelRequest,
  type ToolUseBlock,
} from "cairn/agent";
import { z } from "zod";
import { recordEffect } from "./ledger.js";

/** Input of the research workflow. */
export interface ResearchInput {
  topic: string;
  /** Revisions allowed after a review asks for changes. Default 2. */
  maxRevisions?: number;
}

/** The options of the review request. Choose `revise` with `--message "<notes>"` (or `message`) to ask for changes. */
export const REVIEW_OPTIONS = ["approve", "revise"] as const;

/** One search hit of the fake search tool. */
export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

/** What the research workflow returns. */
export interface ResearchResult {
  topic: string;
  /** `approved`: a report was written; `rejected`: the last review still asked for changes after `maxRevisions`; `review-timed-out`: nobody reviewed within 72h. */
  status: "approved" | "rejected" | "review-timed-out";
  /** The questions the model searched. */
  questions: string[];
  /** Search hits the model read. */
  sources: number;
  revisions: number;
  /** The last draft the reviewer saw. */
  draft: string;
  /** The final report, when approved. */
  report: string | null;
  /** Who gave the last review ("timeout" when nobody did). */
  reviewedBy: string | null;
  /** Model calls, tokens and cost over every agent run, folded from their journals. */
  usage: { modelCalls: number; toolCalls: number; inputTokens: number; outputTokens: number; costMicros: number };
}

/** The step-latency knob for the demo: `CAIRN_EXAMPLE_STEP_MS` (default 0). */
export const STEP_MS_ENV = "CAIRN_EXAMPLE_STEP_MS";

function stepMs(): number {
  const value = Number(process.env[STEP_MS_ENV] ?? 0);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** FNV-1a: a stable small hash so fake results depend only on the query. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 48);
}

/**
 * A deterministic fake web search. It records each call in the example ledger under its
 * idempotency key (the key a real search API would deduplicate on). For the demo, the n-th
 * question of a turn takes n × `CAIRN_EXAMPLE_STEP_MS` to answer, so a worker can be killed while
 * some searches are still running.
 */
export const searchTool = defineTool({
  name: "search",
  description: "Searches the web for one question and returns the top hits (title, url, snippet).",
  input: z.object({ query: z.string().min(1).describe("The question to search for.") }),
  effect: "idempotent",
  async run({ query }, { idempotencyKey, toolCallId, signal }): Promise<SearchHit[]> {
    recordEffect(idempotencyKey);
    // The scripted model numbers its calls search_0, search_1, …; a real provider's ids are opaque.
    const position = Math.min(Number(/^search_(\d+)$/.exec(toolCallId)?.[1] ?? 0), 8);
    await delay(stepMs() * (position + 1), signal);
    const h = hash(query);
    return Array.from({ length: 2 + (h % 2) }, (_, i) => ({
      title: `${query} (source ${i + 1})`,
      url: `https://example.org/${slug(query)}/${(h >>> (i * 4)) & 0xfff}`,
      snippet: `Evidence ${(h >>> (i * 3)) % 97} bearing on "${query}".`,
    }));
  },
});

const QUESTION_TEMPLATES = [
  (topic: string) => `What is the current state of ${topic}?`,
  (topic: string) => `What are the main open problems in ${topic}?`,
  (topic: string) => `Who are the leading groups working on ${topic}?`,
  (topic: string) => `What results on ${topic} are expected in the next two years?`,
];

const TOPIC = /^Research "([^"]+)"/;
const REVISE = /^Revise the draft following these notes: ([\s\S]*)$/;
const WRITE = /^The draft is approved\. Write the final report\.$/;

/** The text of the last user message of a request. */
function lastUserText(request: ModelRequest): string {
  const last = request.messages.findLast((m) => m.role === "user");
  return last?.role === "user" ? textOf(last.content) : "";
}

function countToolResults(request: ModelRequest): number {
  return request.messages.reduce((sum, m) => sum + (m.role === "tool" ? m.content.length : 0), 0);
}

/**
 * The scripted stand-in for an LLM: it answers by the shape of the conversation, like the prompts
 * {@link research} writes. Turn 1 plans four questions and searches them in one turn; turn 2
 * drafts; later turns revise on the reviewer's notes or write the report.
 */
export function researchModel(): ScriptedModel {
  const followUp = (request: ModelRequest) => {
    const said = lastUserText(request);
    const first = request.messages[0];
    const topic = TOPIC.exec(first?.role === "user" ? textOf(first.content) : "")?.[1] ?? "the topic";
    const drafts = request.messages.filter((m) => m.role === "assistant").length - 1;
    const revise = REVISE.exec(said);
    if (revise) return { content: `Draft on ${topic}, revision ${drafts}: reworked to address "${revise[1]!.trim() || "the reviewer's comments"}".` };
    if (WRITE.test(said)) {
      const approved = request.messages.findLast((m) => m.role === "assistant");
      const draft = approved?.role === "assistant" ? textOf(approved.content) : "";
      return { content: `Report: ${topic}\n\n${draft}\n\nConclusion: approved for circulation.` };
    }
    return { content: `I do not know what to do with: ${said.slice(0, 80)}` };
  };
  return new ScriptedModel([
    (request) => {
      const topic = TOPIC.exec(lastUserText(request))?.[1] ?? "the topic";
      const questions = QUESTION_TEMPLATES.map((template) => template(topic));
      const calls: ToolUseBlock[] = questions.map((query, i) => ({ type: "tool_use", id: `search_${i}`, name: "search", input: { query } }));
      return { content: [{ type: "text", text: `Plan:\n${questions.map((q, i) => `${i + 1}. ${q}`).join("\n")}` }, ...calls] };
    },
    (request) => ({
      content: `Draft on ${TOPIC.exec(lastUserText(request))?.[1]}: ${countToolResults(request)} searches reviewed; the evidence is summarized question by question.`,
    }),
    ...Array.from({ length: 10 }, () => followUp),
  ]);
}

const SYSTEM = [
  "You are a careful research assistant.",
  "First plan three to five research questions and call the search tool for all of them in the same turn.",
  "Then write a short draft that summarizes the evidence question by question, citing URLs.",
  "When asked to revise, rewrite the draft following the notes. When the draft is approved, write the final report.",
].join(" ");

/** The research agent: plans, searches in parallel, drafts. Its every call is a journaled step. */
export const researcher = defineAgent({
  name: "researcher",
  version: "1",
  model: () => modelFromEnv() ?? researchModel(),
  system: SYSTEM,
  tools: [searchTool],
  budget: { maxSteps: 12, maxToolCalls: 12, maxCostUsd: 1 },
  maxTokens: 2048,
});

/** The text of the final assistant turn, or "" when the run has none. */
function draftOf(result: AgentResult): string {
  return result.text.trim();
}

/** The questions searched and the hits read, from the transcript. */
function searchesOf(messages: Message[]): { questions: string[]; sources: number } {
  const questions: string[] = [];
  let sources = 0;
  for (const message of messages) {
    if (message.role === "assistant" && Array.isArray(message.content)) {
      for (const block of message.content)
        if (block.type === "tool_use" && block.name === "search") questions.push(String((block.input as { query?: unknown }).query));
    }
    if (message.role === "tool") {
      for (const result of message.content) {
        try {
          const hits: unknown = result.isError ? null : JSON.parse(result.content);
          if (Array.isArray(hits)) sources += hits.length;
        } catch {
          // An error result: no hits.
        }
      }
    }
  }
  return { questions, sources };
}

/** The research workflow: the agent drafts, a person reviews, the agent revises or writes the report. */
export const research = defineWorkflow({
  name: "research",
  version: "2",
  async run(ctx, input: ResearchInput): Promise<ResearchResult> {
    const topic = input.topic.trim();
    const maxRevisions = input.maxRevisions ?? 2;
    const usage = { modelCalls: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0, costMicros: 0 };
    const tally = (result: AgentResult): AgentResult => {
      usage.modelCalls += result.totals.steps;
      usage.toolCalls += result.totals.toolCalls;
      usage.inputTokens += result.totals.usage.inputTokens;
      usage.outputTokens += result.totals.usage.outputTokens;
      usage.costMicros += result.totals.costMicros;
      return result;
    };

    let session = tally(await ctx.child(researcher, { prompt: `Research "${topic}" and draft a short summary of the evidence.` }));
    const { questions, sources } = searchesOf(session.messages);
    ctx.log.info("drafted", { questions: questions.length, sources });
    const done = (status: ResearchResult["status"], revisions: number, report: string | null, reviewedBy: string | null): ResearchResult => ({
      topic,
      status,
      questions,
      sources,
      revisions,
      draft: draftOf(session),
      report,
      reviewedBy,
      usage,
    });

    for (let revisions = 0; ; revisions++) {
      let review;
      try {
        review = await ctx.askHuman({
          name: "review",
          question: `Review the draft on "${topic}"${revisions > 0 ? ` (revision ${revisions})` : ""}: approve it, or choose revise with notes.`,
          options: [...REVIEW_OPTIONS],
          context: { draft: draftOf(session), questions, sources, revisions },
          timeout: "72h",
        });
      } catch (error) {
        if (!isCairnError(error, "TIMEOUT")) throw error;
        ctx.log.warn("no review within 72h", { revisions });
        return done("review-timed-out", revisions, null, "timeout");
      }

      if (review.option === "approve") {
        const approvedDraft = draftOf(session);
        session = tally(
          await ctx.child(researcher, { messages: [...session.messages, { role: "user", content: "The draft is approved. Write the final report." }] }),
        );
        ctx.log.info("report written", { revisions });
        return { ...done("approved", revisions, draftOf(session), review.by), draft: approvedDraft };
      }

      if (revisions >= maxRevisions) {
        ctx.log.warn("still not approved after the last allowed revision", { revisions });
        return done("rejected", revisions, null, review.by);
      }

      const notes = review.message ?? (typeof review.value === "string" ? review.value : "");
      const revised = `Revise the draft following these notes: ${notes}`;
      session = tally(await ctx.child(researcher, { messages: [...session.messages, { role: "user", content: revised }] }));
      ctx.log.info("revised", { revision: revisions + 1 });
    }
  },
});
