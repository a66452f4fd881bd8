import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { storeUrl } from "../../test/support/engines.js";
import { requireBuild } from "../../test/support/processes.js";
import { createEngine } from "../engine/create-engine.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";

const MAIN = join(fileURLToPath(new URL("../../", import.meta.url)), "dist/src/cli/main.js");

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, CAIRN_LOG_LEVEL: "error" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("cairn outbox", () => {
  it("lists undelivered messages (pending and dead), one status with --pending/--dead, everything with --all, and re-queues a dead one", async () => {
    requireBuild();
    const store = storeUrl("sqlite");
    const wf = defineWorkflow({
      name: "notifier",
      async run(ctx) {
        await ctx.emit("mail.send", { to: "ada" });
        await ctx.emit("sms.send", { to: "bob" });
      },
    });
    // mail.send has a handler that always fails (one attempt: dead at once); sms.send has none, so it stays pending.
    const engine = await createEngine({
      store,
      workflows: [wf],
      logger: silentLogger,
      outbox: { maxAttempts: 1, handlers: { "mail.send": () => Promise.reject(new Error("SMTP 550\nmailbox unavailable")) } },
    });
    try {
      const worker = engine.startWorker({ pollInterval: 10 });
      await (await engine.start(wf, {}, { runId: "n-1" })).result();
      await waitFor(async () => (await engine.listOutbox({ status: ["dead"] })).length === 1, { what: "the mail message to die" });
      await worker.stop();

      // By default both kinds of undelivered message: pending and dead.
      const undelivered = await cli("outbox", "--store", store);
      expect(undelivered.code, undelivered.stderr).toBe(0);
      expect(undelivered.stdout).toMatch(/MESSAGE\s+TOPIC\s+STATUS\s+ATTEMPTS\s+NEXT ATTEMPT\s+LAST ERROR/);
      expect(undelivered.stdout).toContain("n-1:sms.send#0");
      expect(undelivered.stdout).toMatch(/n-1:mail\.send#0\s+mail\.send\s+dead/);
      expect(undelivered.stdout).toContain("outbox retry <message>");

      const pending = await cli("outbox", "--pending", "--store", store);
      expect(pending.code, pending.stderr).toBe(0);
      expect(pending.stdout).toContain("n-1:sms.send#0");
      expect(pending.stdout).not.toContain("n-1:mail.send#0");

      const dead = await cli("outbox", "--dead", "--store", store);
      expect(dead.stdout).toContain("n-1:mail.send#0");
      expect(dead.stdout).toContain("SMTP 550 mailbox unavailable");
      expect(dead.stdout).not.toContain("sms.send");
      expect(dead.stdout).toContain("outbox retry <message>");

      const all = JSON.parse((await cli("outbox", "--all", "--json", "--store", store)).stdout) as {
        messageId: string;
        status: string;
        attempts: number;
        payload: unknown;
      }[];
      expect(all.map((m) => [m.messageId, m.status, m.attempts])).toEqual([
        ["n-1:mail.send#0", "dead", 1],
        ["n-1:sms.send#0", "pending", 0],
      ]);
      expect(all[0]!.payload).toEqual({ to: "ada" });

      const retried = await cli("outbox", "retry", "n-1:mail.send#0", "--store", store);
      expect(retried.code, retried.stderr).toBe(0);
      expect(retried.stdout).toContain("Re-queued n-1:mail.send#0");
      expect((await engine.store.getOutboxMessage("n-1:mail.send#0"))?.status).toBe("pending");
      const again = await cli("outbox", "retry", "n-1:mail.send#0", "--store", store);
      expect(again.stdout).toContain("is pending, not dead");
      const audit = await engine.store.listAudit({ action: "outbox.retry" });
      expect(audit.map((a) => a.target)).toEqual(["n-1:mail.send#0"]);

      const unknown = await cli("outbox", "retry", "ghost:x#0", "--store", store);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain("OUTBOX_MESSAGE_NOT_FOUND");
    } finally {
      await engine.close();
    }
  });
});
