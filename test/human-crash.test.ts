/**
 * Crash test of ctx.askHuman: a real worker process runs a workflow with three outstanding questions
 * and is SIGKILLed; while no worker runs, people answer two of them and the third one's deadline
 * passes. The next worker is SIGKILLed too, at a commit boundary of taking an answer; the one after
 * finishes. A ledger outside the database shows what really happened: every answer applied once, the
 * overdue question escalated (extended, with its notice) exactly once.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { requireBuild, spawnWorker, supervise } from "./support/processes.js";
// @ts-expect-error plain JS fixture
import { workflows } from "./fixtures/human-workflows.mjs";

const FIXTURE = resolve("test/fixtures/human-workflows.mjs");
const RUN = "reviews-1";
const id = (name: string) => `${RUN}:review-${name}#0`;

describe("askHuman across worker crashes", () => {
  it.each([
    ["after-consume", "review-a"],
    ["before-consume", "review-b"],
  ])(
    "answers given while no worker ran are applied once, and an overdue question escalates once (second worker killed at %s of %s)",
    async (point, match) => {
      requireBuild();
      const dir = tempDir();
      const store = `sqlite:${join(dir, "cairn.db")}`;
      const ledger = join(dir, "ledger.txt");
      writeFileSync(ledger, "");
      const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300" };
      const engine = await createEngine({ store, workflows, logger: silentLogger });
      onCleanup(() => engine.close());
      await engine.start("reviews", null, { runId: RUN });
      const journalKinds = async (kind: string) => (await engine.journal(RUN)).filter((e) => e.kind === kind).map((e) => e.opKey);

      // 1. A worker asks the three questions, and is killed.
      const first = spawnWorker(env);
      await first.ready;
      await waitFor(async () => (await engine.listHumanRequests({ runId: RUN, status: "pending" })).length === 3, { what: "three questions" });
      first.child.kill("SIGKILL");
      expect((await first.exited).signal).toBe("SIGKILL");
      expect(await journalKinds("human.extended")).toEqual([]); // c's deadline has not passed under that worker

      // 2. No worker runs: two answers come in, and c's deadline passes.
      await engine.respondToHuman(id("a"), { action: "answer", option: "approve", by: "ana" });
      await engine.respondToHuman(id("b"), { action: "answer", option: "reject", by: "bo" });
      const c = (await engine.getHumanRequest(id("c")))!;
      await waitFor(async () => Date.now() > c.timeoutAt! + 50, { what: "c's deadline to pass" });

      // 3. The next worker dies at a commit boundary of taking an answer.
      const second = spawnWorker({ ...env, CAIRN_CRASH_AT: `${point}:1`, CAIRN_CRASH_MATCH: match });
      await second.ready.catch(() => undefined);
      expect(await supervise(second, { env, tick: async () => undefined, done: async () => false })).toBe("SIGKILL");

      // 4. Another one takes over; c was escalated (extended), so a person answers it.
      const third = spawnWorker(env);
      await third.ready;
      await waitFor(async () => (await journalKinds("human.extended")).length > 0, { what: "c to be extended" });
      await engine.respondToHuman(id("c"), { action: "answer", option: "approve", by: "cy" });
      await waitFor(async () => (await engine.getRun(RUN)).status === "completed", { what: "the run to complete", timeoutMs: 20_000 });
      await waitFor(async () => (await engine.listOutbox({ runId: RUN, status: ["delivered"] })).length === 1, { what: "the notice delivered" });
      third.child.kill("SIGTERM");
      await third.exited;

      expect(await engine.result(RUN)).toEqual(["approve", "reject", "approve"]);
      // Escalated exactly once: one extension entry, one outbox message.
      expect(await journalKinds("human.extended")).toEqual(["review-c#0"]);
      expect(await journalKinds("human.timedout")).toEqual([]);
      expect((await engine.listOutbox({ runId: RUN })).map((m) => [m.messageId, m.topic])).toEqual([[`${id("c")}:extended:1`, "human.escalated"]]);
      // Each answer was consumed once and applied once, as given.
      expect((await journalKinds("human.answered")).sort()).toEqual(["review-a#0", "review-b#0", "review-c#0"]);
      const lines = readFileSync(ledger, "utf8").split("\n").filter(Boolean);
      const applied = lines.filter((l) => l.startsWith("apply ")).map((l) => l.split(" ").slice(1, 4).join(" "));
      expect(applied).toEqual(["a approve ana", "b reject bo", "c approve cy"]);
      // Delivered at least once (a dispatcher killed after its handler ran would deliver again), always the same message.
      const notices = lines.filter((l) => l.startsWith("notify "));
      expect(notices.length).toBeGreaterThanOrEqual(1);
      expect(new Set(notices)).toEqual(new Set([`notify ${id("c")}:extended:1 extended`]));
      expect(await engine.listHumanRequests({ runId: RUN, status: "pending" })).toEqual([]);
    },
    60_000,
  );
});
