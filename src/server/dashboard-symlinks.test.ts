// The dashboard's static files over real HTTP, from a copy of the built dashboard holding symlinks:
// links that leave the folder (to the SQLite store file, to a folder outside) are 404 and never
// serve a byte of their target, even though the dashboard is public under token auth; a link
// that stays inside still works.
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/engines.js";
import { testServer } from "../../test/support/server.js";
import { createEngine } from "../engine/create-engine.js";
import { silentLogger } from "../engine/logger.js";
import { onCleanup } from "../../test/support/engines.js";
import { builtDashboardDir } from "./dashboard.js";

describe("dashboard files and symlinks", () => {
  it("refuses links that leave the dashboard folder (the store file, a folder outside) and serves those that stay in", async () => {
    const built = builtDashboardDir();
    if (!built) throw new Error("The dashboard is not built: run `npm run build` so dist/dashboard/ exists.");
    const parent = tempDir();
    const dbFile = join(parent, "cairn.db");
    const engine = await createEngine({ store: `sqlite:${dbFile}`, logger: silentLogger });
    onCleanup(() => engine.close());
    await engine.store.appendAudit({ at: Date.now(), actor: "cli:test", action: "run.cancel", target: "secret-run-id", detail: null });
    const dir = join(parent, "ui");
    cpSync(built, dir, { recursive: true });
    const outside = join(parent, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "private.txt"), "private bytes");
    symlinkSync(dbFile, join(dir, "assets", "leak.js"));
    symlinkSync(dbFile, join(dir, "store.txt"));
    symlinkSync(outside, join(dir, "assets", "elsewhere"));
    symlinkSync(join(dir, "index.html"), join(dir, "assets", "again.html"));

    const server = await testServer(engine, { dashboardDir: dir, auth: "tokens" });
    const get = async (path: string) => {
      const res = await fetch(`${server.url}${path}`);
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
    };
    expect(readFileSync(dbFile).subarray(0, 15).toString()).toBe("SQLite format 3");
    for (const path of ["/ui/assets/leak.js", "/ui/store.txt", "/ui/assets/elsewhere/private.txt", "/ui/assets%2Felsewhere%2Fprivate.txt"]) {
      const res = await get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body.toString("latin1")).not.toContain("SQLite format 3");
      expect(res.body.toString("latin1")).not.toContain("private bytes");
    }
    const inside = await get("/ui/assets/again.html");
    expect(inside.status).toBe(200);
    expect(inside.body.toString()).toContain('<div id="root">');
  });
});
