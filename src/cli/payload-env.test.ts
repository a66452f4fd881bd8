/**
 * CAIRN_PAYLOAD_INLINE_LIMIT: a process started by the CLI offloads payloads over the limit it names,
 * and a malformed value is refused at start, naming the variable.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli, type CliResult } from "../../test/support/cli.js";
import { storeUrl } from "../../test/support/engines.js";
import { requireBuild } from "../../test/support/processes.js";
import { openStore } from "../store/open-store.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const WORKFLOWS = join(ROOT, "test/fixtures/payload-workflows.mjs");

function cli(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return runCli(args, { cwd: ROOT, env: { CAIRN_LOG_LEVEL: "error", ...env } });
}

describe("CAIRN_PAYLOAD_INLINE_LIMIT", () => {
  it("sets the inline limit of CLI-started processes, and a malformed value is refused with a clear error", async () => {
    requireBuild();
    const store = storeUrl("sqlite");
    const input = JSON.stringify({ secret: "s".repeat(300) });
    const start = (env: Record<string, string>, runId: string) =>
      cli(
        { CAIRN_ENCRYPTION_KEY: "", CAIRN_ENCRYPTION_KEYS: "", ...env },
        "start",
        "heavy",
        "--workflows",
        WORKFLOWS,
        "--input",
        input,
        "--run-id",
        runId,
        "--store",
        store,
      );

    const offloaded = await start({ CAIRN_PAYLOAD_INLINE_LIMIT: "100" }, "small-limit");
    expect(offloaded.code, offloaded.stderr).toBe(0);
    const inline = await start({ CAIRN_PAYLOAD_INLINE_LIMIT: "" }, "default-limit");
    expect(inline.code, inline.stderr).toBe(0);

    const bad = await start({ CAIRN_PAYLOAD_INLINE_LIMIT: "64k" }, "bad-limit");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("INVALID_INPUT");
    expect(bad.stderr).toContain('CAIRN_PAYLOAD_INLINE_LIMIT must be a whole number of bytes (e.g. 65536), or Infinity to never offload payloads; got "64k"');

    // The raw store (no payload layer) shows how each input was written.
    const raw = await openStore(store);
    try {
      expect((await raw.getRun("small-limit"))?.input).toMatch(/^\{"\$cairn":"blob","sha256":"[0-9a-f]{64}","size":\d+\}$/);
      expect((await raw.getRun("default-limit"))?.input).toBe(input);
      expect(await raw.getRun("bad-limit")).toBeUndefined();
    } finally {
      await raw.close();
    }
  });
});
