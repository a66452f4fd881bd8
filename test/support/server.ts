import { NonRetryableError } from "../../src/core/errors.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine } from "../../src/engine/engine.js";
import { serve, type RunningServer, type ServeOptions } from "../../src/server/serve.js";
import { onCleanup } from "./engines.js";

/** `steps` steps, each followed by a wait for a "go" event: a test paces the run by sending events. */
export const paced = defineWorkflow({
  name: "paced",
  version: "1",
  async run(ctx, input: { steps: number }) {
    const out: number[] = [];
    for (let i = 0; i < input.steps; i++) {
      out.push(await ctx.step("s", () => i));
      await ctx.waitForEvent("go");
    }
    return out;
  },
});

/** Asks a person to approve or reject. */
export const ask = defineWorkflow({
  name: "ask",
  version: "1",
  async run(ctx) {
    const reply = await ctx.askHuman({ name: "review", question: "Ship it?", options: ["approve", "reject"] });
    return reply.option;
  },
});

/** Set `healed` to let the flaky workflow complete. */
export const flakyState = { healed: false };

/** Fails until `flakyState.healed` is set, then completes. */
export const flaky = defineWorkflow({
  name: "flaky",
  version: "1",
  async run(ctx) {
    return ctx.step("try", () => {
      if (!flakyState.healed) throw new NonRetryableError("not yet");
      return "ok";
    });
  },
});

export const TEST_WORKFLOWS = [paced, ask, flaky];

/** Serves the engine on 127.0.0.1 (a free port unless given); closed after the test. */
export async function testServer(engine: Engine, options: ServeOptions = {}): Promise<RunningServer> {
  const server = await serve(engine, { port: 0, streamPollMs: 20, ...options, host: "127.0.0.1" });
  onCleanup(() => server.close());
  return server;
}
