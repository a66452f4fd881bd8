/**
 * A run whose step results and event are offloaded to blobs and encrypted resumes correctly
 * after workers are SIGKILLed at commit boundaries: replay reads the blobs back (and verifies
 * them), no step runs twice per attempt, and the database never holds the secret in clear.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { aesGcmCodecFromEnv } from "../src/store/payloads/aes-gcm-codec.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { checkRunInvariants, readLedger } from "./support/invariants.js";
import { crashAtPoint, finishCleanly, requireBuild, type Supervision } from "./support/processes.js";
// @ts-expect-error plain JS fixture
import { big, workflows } from "./fixtures/payload-workflows.mjs";

const FIXTURE = resolve("test/fixtures/payload-workflows.mjs");
const SECRET = "Opal-92b1e7";
const KEYS = { CAIRN_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 5).toString("base64")}`, CAIRN_ENCRYPTION_KEY_ID: "k1" };

describe("SIGKILL with offloaded, encrypted payloads", () => {
  it.each(["after-intent", "after-outcome", "after-consume"])("%s", async (point) => {
    requireBuild();
    const dir = tempDir();
    const path = join(dir, "cairn.db");
    const ledger = join(dir, "ledger.txt");
    const engine = await createEngine({ store: `sqlite:${path}`, workflows, logger: silentLogger, payloads: { codec: aesGcmCodecFromEnv(KEYS) } });
    onCleanup(() => engine.close());
    await engine.start("heavy", { secret: SECRET }, { runId: "h" });
    const text = big(`${SECRET}-doc`, 90_000);
    const s: Supervision = {
      env: { CAIRN_TEST_STORE: `sqlite:${path}`, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300", ...KEYS },
      async tick() {
        if ((await engine.getRun("h")).status === "suspended") await engine.sendEvent("h", "doc", { text }, { eventId: "doc" });
      },
      async done() {
        return (await engine.getRun("h")).status === "completed";
      },
    };
    const crashes = await crashAtPoint(s, point, "");
    expect(crashes, `crash point ${point} was reached`).toBeGreaterThan(0);
    await finishCleanly(s);

    expect(await engine.result("h")).toEqual({ c: 290_000, head: text.slice(0, 12), out: `${SECRET}-out` });
    const journal = await checkRunInvariants(engine, "h", readLedger(ledger));
    expect(journal.filter((e) => e.kind === "step.completed").map((e) => (e.data as { result: unknown }).result)).toEqual([
      big(`${SECRET}-a`),
      big(`${SECRET}-b`),
      290_000,
    ]);

    const raw = new Database(path, { readonly: true });
    onCleanup(() => void raw.close());
    const rows = raw.prepare("SELECT kind, payload FROM journal WHERE run_id = 'h' AND kind IN ('step.completed', 'event.received')").all() as {
      kind: string;
      payload: string;
    }[];
    expect(rows.filter((row) => row.payload.startsWith('{"$cairn":"blob"')).length).toBeGreaterThanOrEqual(3);
    const files = [path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file).toString("latin1"));
    expect(files.join("\n")).not.toContain(SECRET);
  });
});
