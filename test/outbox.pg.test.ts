import { describe, it } from "vitest";
import { outboxEngineSuite } from "./support/outbox-suite.js";
import { freshPgUrl, pgReachable } from "./support/pg-schema.js";

// Needs PostgreSQL (CAIRN_TEST_PG_URL); under CI=true an unreachable server fails the suite.
if (await pgReachable()) outboxEngineSuite("postgres", () => freshPgUrl());
else describe.skip("the outbox on postgres", () => it("needs PostgreSQL", () => undefined));

if (await pgReachable()) {
  describe("the outbox on postgres: wake-ups", () => {
    it("a dispatcher that would poll only once a minute is woken by the emit's NOTIFY", async () => {
      const { createEngine } = await import("../src/engine/create-engine.js");
      const { defineWorkflow } = await import("../src/engine/define-workflow.js");
      const { silentLogger } = await import("../src/engine/logger.js");
      const { onCleanup } = await import("./support/engines.js");
      const { waitFor } = await import("../src/testing/wait-for.js");
      const { expect } = await import("vitest");
      const wf = defineWorkflow({
        name: "notify",
        async run(ctx) {
          await ctx.emit("wake.topic", 1);
        },
      });
      const url = freshPgUrl();
      const delivered: string[] = [];
      const listener = await createEngine({
        store: url,
        logger: silentLogger,
        outbox: { handlers: { "wake.topic": (d) => void delivered.push(d.messageId) } },
      });
      onCleanup(() => listener.close());
      const runner = await createEngine({ store: url, logger: silentLogger, workflows: [wf] });
      onCleanup(() => runner.close());
      const dispatcher = listener.startDispatcher({ pollInterval: 60_000 });
      await (listener.store as unknown as { listening(): Promise<void> }).listening();
      await new Promise((r) => setTimeout(r, 100)); // let its first (empty) claim pass, so only a wake-up can find the message
      runner.startWorker({ pollInterval: 10, dispatcher: false });
      await runner.start(wf, {}, { runId: "n1" });
      await waitFor(() => delivered.length === 1, { what: "delivery woken by NOTIFY", timeoutMs: 10_000 });
      expect(delivered).toEqual(["n1:wake.topic#0"]);
      await dispatcher.stop();
    });
  });
}
