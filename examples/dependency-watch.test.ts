import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, silentLogger, type Engine } from "cairn";
import { codeHost, dependencyWatch, latestVersionOf, upgrader, type WatchProgress } from "./dependency-watch.js";
import { countLedger, LEDGER_ENV } from "./ledger.js";
import { waitFor } from "./test-helpers.js";

// The examples pick a real model when a key is set; the tests run on the scripted one.
delete process.env.ANTHROPIC_API_KEY;
delete process.env.OPENAI_API_KEY;
delete process.env.CAIRN_MODEL;

const HOUR = 3_600_000;
const TAGS = { repo: "acme/api", team: "platform" };
const outdated = (packages: string[], cycle: number) => packages.filter((name) => Number(latestVersionOf(name, cycle).split(".")[0]) >= 2);

describe.each([
  { store: "memory", url: (_dir: string) => "memory:" },
  { store: "sqlite", url: (dir: string) => `sqlite:${join(dir, "watch.db")}` },
])("dependency watcher on the $store store (time driven by an injected clock)", ({ url }) => {
  let now: number;
  let dir: string;
  let ledger: string;
  let engine: Engine;
  /** The github token now: rotated by the test between cycles. */
  let token: string;
  let revoked: string[];

  beforeEach(async () => {
    token = "ghp_first";
    revoked = [];
    codeHost.tokens.clear();
    now = Date.UTC(2026, 0, 5, 9, 0, 0);
    dir = mkdtempSync(join(tmpdir(), "cairn-watch-"));
    ledger = join(dir, "ledger.txt");
    process.env[LEDGER_ENV] = ledger;
    engine = await createEngine({
      store: url(dir),
      workflows: [dependencyWatch, upgrader],
      clock: () => now,
      logger: silentLogger,
      credentials: { github: { resolve: () => token, revoke: ({ runId }) => void revoked.push(runId) } },
    });
    engine.startWorker({ pollInterval: 10 });
  });

  afterEach(async () => {
    await engine.close();
    delete process.env[LEDGER_ENV];
    rmSync(dir, { recursive: true, force: true });
  });

  const progressAt = (runId: string, cycle: number) =>
    waitFor(
      async () => {
        const value = await engine.getPublished<WatchProgress>(runId, "progress");
        const run = await engine.getRun(runId);
        return value?.value.cycle === cycle && run.status === "suspended" && value.value;
      },
      { timeoutMs: 20_000 },
    );

  it("runs cycles on a durable timer, answers progress queries, takes steering while asleep, and continues as new", async () => {
    const start = ["zod", "hono", "left-pad", "undici"];
    await engine.start(dependencyWatch, { repo: "acme/api", packages: start, every: "6h", cyclesPerRun: 2 }, { runId: "watch-1", tags: TAGS });

    // Cycle 0: one pull request per outdated package, then the run sleeps (no worker holds it).
    const first = await progressAt("watch-1", 0);
    expect(first.packages).toEqual(start);
    expect(first.opened).toHaveLength(outdated(start, 0).length);
    expect((await engine.getRun("watch-1")).leaseOwner).toBeNull();

    // Steering while it sleeps: the reply is the new list; the same request id gets the same reply, once.
    const change = { add: ["vitest"], remove: ["left-pad"] };
    const reply = await engine.request("watch-1", "watch", change, { requestId: "steer-1", timeoutMs: 20_000 });
    expect(reply).toEqual({ packages: ["zod", "hono", "undici", "vitest"] });
    expect(await engine.request("watch-1", "watch", { add: ["other"] }, { requestId: "steer-1", timeoutMs: 20_000 })).toEqual(reply);

    // Tags find the watcher and its cycles' agent runs (children inherit them).
    const tagged = await engine.listRuns({ tags: { repo: "acme/api" } });
    expect(tagged.runs.map((r) => r.runId)).toContain("watch-1");
    expect(tagged.runs.filter((r) => r.workflow === "upgrader")).toHaveLength(1);

    // The token rotates while the watcher sleeps; six hours later cycle 1 runs on the steered list.
    token = "ghp_second";
    now += 6 * HOUR + 1;
    const second = await progressAt("watch-1", 1);
    expect(second.packages).toEqual(["zod", "hono", "undici", "vitest"]);

    // After its two cycles the run continues as a fresh one, carrying the list, the count and the PRs.
    now += 6 * HOUR + 1;
    const next = await waitFor(async () => (await engine.getRun("watch-1")).continuedTo, { timeoutMs: 20_000 });
    const third = await progressAt(next, 2);
    expect(third.packages).toEqual(["zod", "hono", "undici", "vitest"]);
    expect((await engine.getRun(next)).tags).toEqual(TAGS);
    // Versions change every cycle, so each cycle opens its own pull requests.
    expect(third.opened).toHaveLength(outdated(start, 0).length + outdated(second.packages, 1).length + outdated(second.packages, 2).length);

    // Every pull request was opened once.
    const counts = countLedger(ledger);
    expect(counts.size).toBe(third.opened.length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);

    // The token: resolved at each use (cycle 0 had the first, later cycles the rotated one), audited
    // per use with the tool's scope, revoked when each cycle's agent run ended, and never journaled.
    const used = [...codeHost.tokens.entries()];
    expect(new Set(used.map(([, t]) => t))).toEqual(new Set(["ghp_first", "ghp_second"]));
    expect(used.filter(([key]) => key.startsWith("watch-1/upgrader#0"))).toHaveLength(outdated(start, 0).length);
    expect(used.filter(([key]) => key.startsWith("watch-1/upgrader#0")).every(([, t]) => t === "ghp_first")).toBe(true);
    expect(used.filter(([key]) => !key.startsWith("watch-1/upgrader#0")).every(([, t]) => t === "ghp_second")).toBe(true);
    const agentRuns = (await engine.listRuns({ workflow: "upgrader" })).runs.map((r) => r.runId).sort();
    expect(agentRuns).toHaveLength(3);
    await waitFor(() => revoked.length === 3, { timeoutMs: 10_000 });
    expect([...revoked].sort()).toEqual(agentRuns);
    const audit = await engine.store.listAudit({ limit: 1000 });
    const uses = audit.filter((a) => a.action === "credential.use");
    expect(uses).toHaveLength(third.opened.length);
    expect(uses.every((a) => (a.detail as { scope?: string }).scope === "tool:open_pull_request")).toBe(true);
    for (const runId of [...agentRuns, "watch-1", next]) {
      const journal = JSON.stringify(await engine.journal(runId));
      expect(journal).not.toContain("ghp_first");
      expect(journal).not.toContain("ghp_second");
    }
  });
});
