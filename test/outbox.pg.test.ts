import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import { silentLogger } from "../src/engine/logger.js";
import { openStore } from "../src/store/open-store.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup } from "./support/engines.js";
import { outboxEngineSuite } from "./support/outbox-suite.js";
import { freshPgUrl, pgReachable } from "./support/pg-schema.js";

// Needs PostgreSQL (CAIRN_TEST_PG_URL); under CI=true an unreachable server fails the suite.
if (await pgReachable()) outboxEngineSuite("postgres", () => freshPgUrl());
else describe.skip("the outbox on postgres", () => it("needs PostgreSQL", () => undefined));

if (await pgReachable()) {
  describe("the outbox on postgres: wake-ups", () => {
    it("a dispatcher that would poll only once a minute is woken by the emit's NOTIFY", async () => {
      const wf = defineWorkflow({
        name: "notify",
        async run(ctx) {
          await ctx.emit("wake.topic", 1);
        },
      });
      const url = freshPgUrl();
      const pgStore = await openStore(url);
      // Counts the dispatcher's claims (the store itself is real), so the test knows when it has gone idle.
      let claims = 0;
      const counted = new Proxy(pgStore, {
        get(target, key) {
          if (key === "claimOutbox")
            return async (...args: Parameters<typeof target.claimOutbox>) => {
              const claimed = await target.claimOutbox(...args);
              claims += 1;
              return claimed;
            };
          const value = Reflect.get(target, key, target) as unknown;
          return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const delivered: string[] = [];
      const listener = await createEngine({
        store: counted,
        logger: silentLogger,
        outbox: { handlers: { "wake.topic": (d) => void delivered.push(d.messageId) } },
      });
      onCleanup(() => listener.close());
      const runner = await createEngine({ store: url, logger: silentLogger, workflows: [wf] });
      onCleanup(() => runner.close());
      const dispatcher = listener.startDispatcher({ pollInterval: 60_000 });
      await (pgStore as unknown as { listening(): Promise<void> }).listening();
      // Its first claim found nothing: from now on it sleeps for a minute unless a NOTIFY wakes it.
      await waitFor(() => claims >= 1, { what: "the dispatcher's first claim" });
      runner.startWorker({ pollInterval: 10, dispatcher: false });
      await runner.start(wf, {}, { runId: "n1" });
      await waitFor(() => delivered.length === 1, { what: "delivery woken by NOTIFY", timeoutMs: 10_000 });
      expect(delivered).toEqual(["n1:wake.topic#0"]);
      await dispatcher.stop();
    });
  });
}
