// The support-triage example end to end, through the official `openai` and `@anthropic-ai/sdk`
// clients (made by the adapters from the environment, as a user's worker would) against a local
// server that speaks both wire formats, and a real HTTP server the client streams the answer from.
// OpenAI is down for the first turn, so Anthropic answers it (image by URL, its web search, the
// ticket); OpenAI is back for the second turn, whose answer reaches the client while it is generated.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEngine, silentLogger, type Engine } from "cairn";
import { CairnClient } from "cairn/client";
import { serve, type RunningServer } from "cairn/server";
import { ProviderServer, type LedgerEntry, type ProviderStep } from "../test/support/provider-server/index.mjs";
import { countLedger, LEDGER_ENV } from "./ledger.js";
import { followAnswer, triageInput, triager } from "./support-triage.js";

const SCREENSHOT = "https://cdn.example.com/reports/4711/screenshot.png";
const ANSWER = "Thanks, Ada: the checkout page fails on an expired session token. We filed SUP-ticket and will fix it today.";
const SERVER_USE = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "ERR_SESSION_EXPIRED checkout" } };
const SERVER_RESULT = {
  type: "web_search_tool_result",
  tool_use_id: "srvtoolu_1",
  content: [{ type: "web_search_result", url: "https://example.com/kb/session", title: "Session expiry", encrypted_content: "enc_1", page_age: null }],
};

const ENV_KEYS = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "TRIAGE_OPENAI_MODEL", "TRIAGE_ANTHROPIC_MODEL", LEDGER_ENV];
const savedEnv = Object.fromEntries(ENV_KEYS.map((key) => [key, process.env[key]]));

let provider: ProviderServer;
let openaiAnswers: ProviderStep[];
let anthropicAnswers: ProviderStep[];
beforeAll(async () => {
  provider = await new ProviderServer({
    respond: (entry) =>
      (entry.format === "anthropic" ? anthropicAnswers : openaiAnswers).shift() ?? { status: 500, message: `no scripted answer for ${entry.path}` },
  }).start();
});
afterAll(() => provider.close());

const openaiRequests = (requests: LedgerEntry[]) => requests.filter((r) => r.format === "responses");
const anthropicRequests = (requests: LedgerEntry[]) => requests.filter((r) => r.format === "anthropic");

describe("support-triage example on the real SDKs", () => {
  let dir: string;
  let engine: Engine;
  let http: RunningServer;
  let client: CairnClient;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "cairn-triage-"));
    // What a worker's environment holds: the SDKs read their keys and base URLs from it.
    Object.assign(process.env, {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${provider.url}/v1`,
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: provider.url,
      TRIAGE_OPENAI_MODEL: "gpt-triage",
      TRIAGE_ANTHROPIC_MODEL: "claude-triage",
      [LEDGER_ENV]: join(dir, "ledger.txt"),
    });
    engine = await createEngine({ store: `sqlite:${join(dir, "triage.db")}`, workflows: [triager], logger: silentLogger });
    engine.startWorker({ pollInterval: 10 });
    http = await serve(engine, { port: 0, host: "127.0.0.1" });
    client = new CairnClient({ baseUrl: http.url });
  });

  afterEach(async () => {
    await http.close();
    await engine.close();
    for (const key of ENV_KEYS) {
      if (savedEnv[key] === undefined) delete process.env[key];
      else process.env[key] = savedEnv[key];
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("falls back to Anthropic while OpenAI is down, files one ticket, and streams the answer to the client as it is generated", async () => {
    let firstText!: () => void;
    const clientSawText = new Promise<void>((resolve) => (firstText = resolve));
    // Turn 1: OpenAI answers 500 to both attempts of the retry policy; Anthropic looks, searches and files.
    openaiAnswers = [
      { status: 500, message: "overloaded" },
      { status: 503, message: "overloaded" },
    ];
    anthropicAnswers = [
      {
        hosted: { anthropic: [SERVER_USE, SERVER_RESULT] },
        toolCalls: [{ id: "toolu_1", name: "file_ticket", arguments: { title: "Checkout fails: session expired", severity: "high", component: "billing" } }],
        usage: { input: 900, output: 60 },
      },
    ];
    // Turn 2: OpenAI is back. Its streamed answer stops after a few events until the client has
    // shown some of it, so the test proves the text arrives before the model call is journaled.
    openaiAnswers.push({ text: ANSWER, usage: { input: 1200, output: 40 }, hold: clientSawText, holdAfter: 4, eventDelayMs: 1 });

    const before = provider.requests.length;
    const { run } = await client.startRun({
      workflow: "triager",
      input: triageInput({ customer: "Ada", text: "Checkout shows ERR_SESSION_EXPIRED, see screenshot.", screenshotUrl: SCREENSHOT }),
    });
    let shown = "";
    const followed = await followAnswer(client, run.runId, (text) => {
      shown += text;
      if (shown.length > 0) firstText();
    });

    expect(followed.status).toBe("completed");
    expect(followed.text).toBe(ANSWER);
    expect(followed.streamed).toBe(ANSWER);
    expect(shown).toContain(ANSWER);

    const requests = provider.requests.slice(before);
    // One retry layer: 2 requests to the primary (its policy), 1 to the fallback, then the primary again.
    expect(openaiRequests(requests)).toHaveLength(3);
    expect(anthropicRequests(requests)).toHaveLength(1);
    expect(requests.every((r) => r.stream)).toBe(true);

    // The wire: the image went by URL to both providers, each with its own hosted search tool.
    const [firstOpenai] = openaiRequests(requests);
    expect(firstOpenai!.body.model).toBe("gpt-triage");
    expect(firstOpenai!.body.input[0].content).toContainEqual({ type: "input_image", image_url: SCREENSHOT, detail: "low" });
    expect(firstOpenai!.body.tools).toContainEqual({ type: "web_search" });
    const [claude] = anthropicRequests(requests);
    expect(claude!.body.model).toBe("claude-triage");
    expect(claude!.body.messages[0].content).toContainEqual({ type: "image", source: { type: "url", url: SCREENSHOT } });
    expect(claude!.body.tools).toContainEqual({ type: "web_search_20250305", name: "web_search", max_uses: 2 });
    // Turn 2 on OpenAI carries the ticket's result but not Anthropic's hosted blocks (another provider's items).
    const turn2 = JSON.stringify(openaiRequests(requests)[2]!.body.input);
    expect(turn2).toContain("function_call_output");
    expect(turn2).toContain("SUP-");
    expect(turn2).not.toContain("server_tool_use");

    // The journal, read over HTTP: turn 1 answered by the fallback, its search kept as hosted_tool blocks.
    const { entries } = await client.journal(run.runId, { limit: 1000 });
    const answers = entries
      .filter((e) => e.kind === "step.completed" && /model#\d+$/.test(e.opKey ?? ""))
      .map((e) => (e.data as { result: { model: string; answeredBy?: string; content: { type: string; phase?: string }[] } }).result);
    expect(answers.map((a) => [a.model, a.answeredBy])).toEqual([
      ["claude-triage", "claude-triage"], // a fallback answer says so
      ["gpt-triage", undefined], // the next turn starts with the primary again
    ]);
    expect(answers[0]!.content.filter((b) => b.type === "hosted_tool").map((b) => b.phase)).toEqual(["call", "result"]);

    // One ticket, filed once.
    const ledger = countLedger(process.env[LEDGER_ENV]!);
    expect([...ledger.values()]).toEqual([1]);
    expect([...ledger.keys()][0]).toContain(run.runId);
  });
});
