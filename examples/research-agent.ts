/**
 * The research agent of the design: plan → parallel searches → draft → human
 * review (for up to 72 hours) → final report, revising on the reviewer's notes.
 *
 * Every model and tool call is a step, so a crash at any point resumes without
 * redoing finished calls, and the review wait costs nothing while it lasts.
 *
 * Start it, then answer the review:
 * @example
 * const run = await engine.start(research, { topic: "solid-state batteries" }, { runId: "thread-42" });
 * // …once the run waits for "review":
 * await engine.sendEvent("thread-42", "review", { approved: true }, { eventId: "review-1" });
 * const result = await run.result();
 */
import { defineWorkflow, isCairnError } from "cairn";
import { recordEffect } from "./ledger.js";
import { createScriptedModel } from "./scripted-model.js";

/** Input of the research agent. */
export interface ResearchInput {
  topic: string;
  /** Revisions allowed after a review asks for changes. Default 2. */
  maxRevisions?: number;
}

/** What a reviewer sends as the `review` event. */
export interface Review {
  approved: boolean;
  notes?: string;
}

/** One search hit of the fake search tool. */
export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

/** The findings for one planned question. */
export interface Finding {
  question: string;
  hits: SearchHit[];
}

/** What the research agent returns. */
export interface ResearchResult {
  topic: string;
  /** `approved`: a report was written; `rejected`: the last review still asked for changes after `maxRevisions`; `review-timed-out`: nobody reviewed within 72h. */
  status: "approved" | "rejected" | "review-timed-out";
  questions: string[];
  sources: number;
  revisions: number;
  /** The last draft the reviewer saw. */
  draft: string;
  /** The final report, when approved. */
  report: string | null;
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
 * A deterministic fake search tool. It records each call in the example ledger
 * under the step's idempotency key (the key a real API would deduplicate on) and,
 * for the demo, takes `latencyMs` to answer.
 */
export async function search(query: string, options: { idempotencyKey: string; signal: AbortSignal; latencyMs?: number }): Promise<SearchHit[]> {
  recordEffect(options.idempotencyKey);
  await delay(options.latencyMs ?? 0, options.signal);
  const h = hash(query);
  const count = 2 + (h % 2);
  return Array.from({ length: count }, (_, i) => ({
    title: `${query} (source ${i + 1})`,
    url: `https://example.org/${slug(query)}/${(h >>> (i * 4)) & 0xfff}`,
    snippet: `Evidence ${(h >>> (i * 3)) % 97} bearing on "${query}".`,
  }));
}

const QUESTION_TEMPLATES = [
  (topic: string) => `What is the current state of ${topic}?`,
  (topic: string) => `What are the main open problems in ${topic}?`,
  (topic: string) => `Who are the leading groups working on ${topic}?`,
  (topic: string) => `What results on ${topic} are expected in the next two years?`,
];

/** The scripted "LLM" behind the agent. Rules match the prompts the workflow below writes. */
export const researchModel = createScriptedModel([
  {
    match: /^Plan: list (\d+) research questions about "([^"]+)"/,
    respond: (m) => {
      const wanted = Math.min(Number(m[1]), QUESTION_TEMPLATES.length);
      return QUESTION_TEMPLATES.slice(0, wanted)
        .map((template, i) => `${i + 1}. ${template(m[2] ?? "")}`)
        .join("\n");
    },
  },
  {
    match: /^Draft: summarize (\d+) sources on "([^"]+)"/,
    respond: (m) => `Draft on ${m[2]}: ${m[1]} sources reviewed; the evidence is summarized question by question.`,
  },
  {
    match: /^Revise the draft on "([^"]+)" \(revision (\d+)\) following these notes: ([\s\S]*)$/,
    respond: (m) => `Draft on ${m[1]}, revision ${m[2]}: reworked to address "${(m[3] ?? "").trim() || "the reviewer's comments"}".`,
  },
  {
    match: /^Write the final report on "([^"]+)" from this approved draft: ([\s\S]*)$/,
    respond: (m) => `Report: ${m[1]}\n\n${m[2]}\n\nConclusion: approved for circulation.`,
  },
]);

const QUESTIONS = 4;

/** The research agent: `research` in the design. */
export const research = defineWorkflow({
  name: "research",
  version: "1",
  async run(ctx, input: ResearchInput): Promise<ResearchResult> {
    const topic = input.topic.trim();
    const maxRevisions = input.maxRevisions ?? 2;

    const questions = await ctx.step("plan", async ({ idempotencyKey }) => {
      recordEffect(idempotencyKey);
      const { text } = await researchModel.complete({ prompt: `Plan: list ${QUESTIONS} research questions about "${topic}"` });
      return text
        .split("\n")
        .map((line) => line.replace(/^\s*\d+\.\s*/, "").trim())
        .filter((line) => line !== "");
    });
    ctx.log.info("planned", { questions: questions.length });

    // One step per question, all in flight at once; each has its own key (search#0, search#1, …).
    // Later questions are slower, so the demo can stop a worker while some are still running.
    const findings: Finding[] = await Promise.all(
      questions.map((question, i) =>
        ctx.step("search", async ({ idempotencyKey, signal }) => ({
          question,
          hits: await search(question, { idempotencyKey, signal, latencyMs: stepMs() * (i + 1) }),
        })),
      ),
    );
    const sources = findings.reduce((sum, finding) => sum + finding.hits.length, 0);
    ctx.log.info("searched", { sources });

    let draft = await ctx.step("draft", async ({ idempotencyKey }) => {
      recordEffect(idempotencyKey);
      const { text } = await researchModel.complete({ prompt: `Draft: summarize ${sources} sources on "${topic}"` });
      return text;
    });

    for (let revisions = 0; ; revisions++) {
      ctx.log.info("waiting for review", { revisions });
      let review: Review;
      try {
        review = await ctx.waitForEvent<Review>("review", { timeout: "72h" });
      } catch (error) {
        if (!isCairnError(error, "TIMEOUT")) throw error;
        ctx.log.warn("no review within 72h", { revisions });
        return { topic, status: "review-timed-out", questions, sources, revisions, draft, report: null };
      }

      if (review.approved) {
        const approvedDraft = draft;
        const report = await ctx.step("report", async ({ idempotencyKey }) => {
          recordEffect(idempotencyKey);
          const { text } = await researchModel.complete({ prompt: `Write the final report on "${topic}" from this approved draft: ${approvedDraft}` });
          return text;
        });
        ctx.log.info("report written", { revisions });
        return { topic, status: "approved", questions, sources, revisions, draft, report };
      }

      if (revisions >= maxRevisions) {
        ctx.log.warn("still not approved after the last allowed revision", { revisions });
        return { topic, status: "rejected", questions, sources, revisions, draft, report: null };
      }

      const notes = review.notes ?? "";
      const revision = revisions + 1;
      draft = await ctx.step("revise", async ({ idempotencyKey }) => {
        recordEffect(idempotencyKey);
        const { text } = await researchModel.complete({ prompt: `Revise the draft on "${topic}" (revision ${revision}) following these notes: ${notes}` });
        return text;
      });
      ctx.log.info("revised", { revision });
    }
  },
});
