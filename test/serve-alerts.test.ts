// `cairn serve --alerts <file>` as a real child process (built CLI, SQLite file): a bad rules file
// stops it before it listens, naming the field; a good one is installed on the store, evaluated,
// and its alert is listed by GET /alerts and the overview.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import { runCli } from "./support/cli.js";
import { tempDir } from "./support/engines.js";
import { spawnServe } from "./support/serve-process.js";

const spender = defineWorkflow({
  name: "spender",
  async run(ctx) {
    await ctx.step("model", () => ({ usage: { inputTokens: 1, outputTokens: 1 }, costMicros: 3_000_000 }));
  },
});

describe("cairn serve --alerts", () => {
  it("refuses a bad rules file before listening, naming the file and the field", async () => {
    const dir = tempDir();
    const rules = join(dir, "alerts.json");
    writeFileSync(rules, JSON.stringify({ rules: [{ name: "daily", kind: "spendPerDay", threshold: "lots" }] }));
    const result = await runCli(["serve", "--port", "0", "--store", `sqlite:${join(dir, "cairn.db")}`, "--alerts", rules], { cwd: dir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`Alert rules file "${rules}": rules.0.threshold: must be an amount in US dollars`);
    expect(result.stdout).not.toContain("listening");
  });

  it("installs the file's rules, evaluates them and lists the alert", async () => {
    const dir = tempDir();
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const engine = await createEngine({ store, workflows: [spender], logger: silentLogger });
    const worker = engine.startWorker({ pollInterval: 10 });
    await (await engine.start(spender, undefined, { runId: "costly" })).result();
    await worker.stop();
    await engine.close();
    const rules = join(dir, "alerts.json");
    writeFileSync(rules, JSON.stringify({ rules: [{ name: "run-over-2", kind: "spendPerRun", threshold: 2 }] }));
    const cairn = await spawnServe(["--store", store, "--no-dashboard", "--alerts", rules, "--alert-interval", "1000"]);
    await waitFor(() => cairn.output().includes(`alerts: 1 rule(s) from ${rules}`), { what: "the alerts line of the banner" });
    const alerts = await waitFor(
      async () => {
        const body = (await (await fetch(`${cairn.url}/alerts`)).json()) as { alerts: { alertId: string; delivery: string }[] };
        return body.alerts.length > 0 ? body.alerts : undefined;
      },
      { what: "the alert", timeoutMs: 15_000 },
    );
    expect(alerts).toMatchObject([{ alertId: "run-over-2/run/costly", delivery: "pending" }]);
    const stored = (await (await fetch(`${cairn.url}/alerts/rules`)).json()) as { source: string; rules: unknown[] };
    expect(stored).toMatchObject({ source: `cairn serve --alerts ${rules}`, rules: [{ name: "run-over-2", threshold: 2 }] });
  });
});
