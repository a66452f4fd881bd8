/**
 * A run whose step results and event are offloaded to blobs and encrypted resumes correctly
 * after workers are SIGKILLed at commit boundaries: replay reads the blobs back (and verifies
 * them), no step runs twice per attempt, and the database never holds the secret in clear.
 * The same suite runs on SQLite (test/payloads-crash.test.ts) and PostgreSQL (test/payloads-crash.pg.test.ts).
 */
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { aesGcmCodecFromEnv } from "../../src/store/payloads/aes-gcm-codec.js";
// @ts-expect-error plain JS fixture
import { big, workflows } from "../fixtures/payload-workflows.mjs";
import { onCleanup, tempDir } from "./engines.js";
import { checkRunInvariants, readLedger } from "./invariants.js";
import type { RawDatabase } from "./payloads-suite.js";
import { crashAtPoint, finishCleanly, requireBuild, type Supervision } from "./processes.js";

const FIXTURE = resolve("test/fixtures/payload-workflows.mjs");
const SECRET = "Opal-92b1e7";
const KEYS = { CAIRN_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 5).toString("base64")}`, CAIRN_ENCRYPTION_KEY_ID: "k1" };

/** Registers the crash tests for one store; `open` gives a fresh database per test. */
export function payloadsCrashSuite(kind: string, open: () => Promise<RawDatabase>): void {
  describe(`SIGKILL with offloaded, encrypted payloads on ${kind}`, () => {
    it.each(["after-intent", "after-outcome", "after-consume"])("%s", async (point) => {
      requireBuild();
      const db = await open();
      const ledger = join(tempDir(), "ledger.txt");
      const engine = await createEngine({ store: db.url, workflows, logger: silentLogger, payloads: { codec: aesGcmCodecFromEnv(KEYS) } });
      onCleanup(() => engine.close());
      await engine.start("heavy", { secret: SECRET }, { runId: "h" });
      const text = big(`${SECRET}-doc`, 90_000);
      const s: Supervision = {
        env: { CAIRN_TEST_STORE: db.url, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300", ...KEYS },
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

      const rows = await db.sql<{ kind: string; payload: string }>(
        `SELECT kind, payload FROM ${db.t("journal")} WHERE run_id = 'h' AND kind IN ('step.completed', 'event.received')`,
      );
      expect(rows.filter((row) => row.payload.startsWith('{"$cairn":"blob"')).length).toBeGreaterThanOrEqual(3);
      expect(await db.dump()).not.toContain(SECRET);
    });
  });
}
