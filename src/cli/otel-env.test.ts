import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { otelFromEnv } from "./otel-env.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = join(ROOT, "dist/src/cli/main.js");
const ENTRY = join(ROOT, "dist/src/index.js");
const REQUIRE_FROM_ROOT = `createRequire(${JSON.stringify(join(ROOT, "package.json"))})`;

/**
 * What a user's `--import` module does with a real SDK, in a few lines: an AsyncLocalStorage context
 * manager and a tracer provider that writes each ended span (name, parent's name) to a file.
 */
const REGISTER = (out: string) => `
import { AsyncLocalStorage } from "node:async_hooks";
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
const api = ${REQUIRE_FROM_ROOT}("@opentelemetry/api");
const als = new AsyncLocalStorage();
api.context.setGlobalContextManager({
  active: () => als.getStore() ?? api.ROOT_CONTEXT,
  with: (ctx, fn, thisArg, ...args) => als.run(ctx, () => fn.call(thisArg, ...args)),
  bind: (_ctx, target) => target,
  enable() { return this; },
  disable() { return this; },
});
const names = new WeakMap();
let ids = 0;
const tracer = {
  startSpan(name, _options, ctx) {
    const parent = api.trace.getSpan(ctx ?? api.context.active());
    const id = (++ids).toString(16).padStart(16, "0");
    const span = {
      spanContext: () => ({ traceId: "1".repeat(32), spanId: id, traceFlags: 1 }),
      setAttribute: () => span, setAttributes: () => span, addEvent: () => span, setStatus: () => span,
      updateName: () => span, isRecording: () => true, recordException: () => {},
      end: () => appendFileSync(${JSON.stringify(out)}, JSON.stringify({ name, parent: parent ? names.get(parent) ?? null : null }) + "\\n"),
    };
    names.set(span, name);
    return span;
  },
};
api.trace.setGlobalTracerProvider({ getTracer: () => tracer });
`;

describe("CAIRN_OTEL", () => {
  it("unset or 0 adds nothing; 1 adds an observer; anything else is a usage error", async () => {
    expect(await otelFromEnv({})).toEqual({});
    expect(await otelFromEnv({ CAIRN_OTEL: "0" })).toEqual({});
    expect(typeof (await otelFromEnv({ CAIRN_OTEL: "1" })).observer?.aroundStep).toBe("function");
    await expect(otelFromEnv({ CAIRN_OTEL: "yes" })).rejects.toThrow(/CAIRN_OTEL must be 1/);
  });

  it("CAIRN_OTEL=1 makes `cairn worker` record spans through the SDK a --import module registered, step code nested", { timeout: 60_000 }, async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first.`);
    const dir = tempDir();
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const spans = join(dir, "spans.jsonl");
    const register = join(dir, "otel.mjs");
    writeFileSync(register, REGISTER(spans));
    const fixture = join(dir, "traced.mjs");
    writeFileSync(
      fixture,
      [
        `import { createRequire } from "node:module";`,
        `import { defineWorkflow } from ${JSON.stringify(pathToFileURL(ENTRY).href)};`,
        `const api = ${REQUIRE_FROM_ROOT}("@opentelemetry/api");`,
        `export const traced = defineWorkflow({`,
        `  name: "traced",`,
        `  async run(ctx) {`,
        `    return ctx.step("call", async () => { await new Promise((r) => setTimeout(r, 5)); api.trace.getTracer("app").startSpan("app.request").end(); return 1; });`,
        `  },`,
        `});`,
      ].join("\n"),
    );
    const env = { ...process.env, CAIRN_OTEL: "1", NODE_OPTIONS: `--import ${pathToFileURL(register).href}` };
    const start = spawn(process.execPath, [MAIN, "start", "traced", "--run-id", "t1", "--workflows", fixture, "--store", store], { env: { ...process.env } });
    expect(await new Promise((resolve) => start.on("exit", resolve))).toBe(0);
    const worker = spawn(process.execPath, [MAIN, "worker", "--workflows", fixture, "--poll-ms", "20", "--store", store], { env, stdio: "ignore" });
    onCleanup(() => void worker.kill("SIGKILL"));
    const read = () =>
      existsSync(spans)
        ? readFileSync(spans, "utf8")
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line) as { name: string; parent: string | null })
        : [];
    await waitFor(() => read().some((s) => s.name === "cairn.run traced"), { timeoutMs: 20_000 });
    expect(read()).toEqual(
      expect.arrayContaining([
        { name: "app.request", parent: "cairn.step call#0" },
        { name: "cairn.step call#0", parent: "cairn.run traced" },
        { name: "cairn.run traced", parent: null },
      ]),
    );
  });
});
