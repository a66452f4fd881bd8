import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { waitFor } from "../testing/wait-for.js";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { requireBuild } from "../../test/support/processes.js";

const MAIN = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const run = promisify(execFile);

describe("workflow modules declare their queues and outbox for the CLI", () => {
  it("cairn start and cairn worker run a queued workflow and deliver its messages with the module's handler", async () => {
    requireBuild();
    const dir = tempDir();
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const ledger = join(dir, "delivered.txt");
    const entry = fileURLToPath(new URL("../../dist/src/index.js", import.meta.url));
    const module = join(dir, "jobs.mjs");
    writeFileSync(
      module,
      `import { appendFileSync } from "node:fs";
import { defineWorkflow } from ${JSON.stringify(entry)};
export const notify = defineWorkflow({
  name: "notify", version: "1", queue: "mail",
  run: async (ctx, input) => { await ctx.emit("mail.sent", { to: input.to }); return "queued"; },
});
export const queues = { mail: { concurrency: 1 } };
export const outbox = { handlers: { "mail.sent": (m) => appendFileSync(${JSON.stringify(ledger)}, m.messageId + " " + m.payload.to + "\\n") } };
`,
    );
    const env = { ...process.env, CAIRN_STORE: store };
    await run(process.execPath, [MAIN, "start", "notify", "--workflows", module, "--input", '{"to":"ada@example.com"}', "--run-id", "n1"], { env });
    const child = spawn(process.execPath, [MAIN, "worker", "--workflows", module, "--poll-ms", "20"], { env });
    onCleanup(() => void child.kill("SIGKILL"));
    await waitFor(() => existsSync(ledger) && readFileSync(ledger, "utf8").length > 0, { timeoutMs: 20_000, what: "the message delivered" });
    expect(readFileSync(ledger, "utf8")).toBe("n1:mail.sent#0 ada@example.com\n");
    const shown = await run(process.execPath, [MAIN, "runs", "--json"], { env });
    expect(JSON.parse(shown.stdout)).toEqual([expect.objectContaining({ runId: "n1", status: "completed" })]);
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }, 60_000);
});
