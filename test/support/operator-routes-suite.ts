import { expect, it } from "vitest";
import { CairnClient } from "../../src/client/client.js";
import { scheduleActionResponse, versionActionResponse } from "../../src/core/console-schemas.js";
import { issueToken } from "../../src/server/auth/tokens.js";
import { createServer } from "../../src/server/create-server.js";
import { testEngine, type StoreKind } from "./engines.js";
import { TEST_WORKFLOWS } from "./server.js";

type Answer = { status: number; body: any };

/**
 * The operator's write routes (schedules pause/resume, versions retire/reinstate) through the HTTP
 * API on one store kind: admin only, same-origin only, JSON only, bad input named, each change audited.
 */
export function operatorRoutesSuite(kind: StoreKind): void {
  async function setup() {
    const engine = await testEngine(kind, { workflows: TEST_WORKFLOWS });
    await engine.schedule({ name: "nightly", workflow: "paced", cron: "0 3 * * *", input: { steps: 0 } });
    await engine.start("paced", { steps: 1 }, { runId: "p-1" });
    const app = createServer(engine, { auth: "tokens" });
    const now = Date.now();
    const admin = (await issueToken(engine.store, { name: "root", scopes: ["read", "admin"] }, now)).token;
    const writer = (await issueToken(engine.store, { name: "writer", scopes: ["read", "write"] }, now)).token;
    const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
      const res = await app.request(`http://127.0.0.1:4000${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    return { engine, app, admin, writer, post, as };
  }

  it(`pauses and resumes a schedule: admin only, same origin only, audited once per change (${kind})`, async () => {
    const { engine, admin, writer, post, as } = await setup();
    expect((await post("/schedules/nightly/pause", {})).status).toBe(401);
    const refused = await post("/schedules/nightly/pause", {}, as(writer));
    expect([refused.status, refused.body.error.code]).toEqual([403, "FORBIDDEN"]);
    const foreign = await post("/schedules/nightly/pause", {}, { ...as(admin), origin: "https://evil.example" });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, "CROSS_ORIGIN_REFUSED"]);
    const text = await post("/schedules/nightly/pause", "{}", { ...as(admin), "content-type": "text/plain" });
    expect(text.status).toBe(415);
    expect((await engine.getSchedule("nightly")).status).toBe("active");
    expect(await engine.store.listAudit({ action: "schedule.pause" })).toEqual([]);

    const paused = await post("/schedules/nightly/pause", {}, { ...as(admin), origin: "http://127.0.0.1:4000" });
    expect(paused.status).toBe(200);
    expect(scheduleActionResponse.parse(paused.body)).toMatchObject({ changed: true, schedule: { name: "nightly", status: "paused", nextTickAt: null } });
    expect((await engine.getSchedule("nightly")).status).toBe("paused");
    // Again: nothing changes, nothing is audited.
    expect((await post("/schedules/nightly/pause", {}, as(admin))).body).toMatchObject({ changed: false, schedule: { status: "paused" } });
    const resumed = await post("/schedules/nightly/resume", {}, as(admin));
    expect(resumed.body).toMatchObject({ changed: true, schedule: { status: "active", nextTickAt: expect.stringMatching(/T03:00:00\.000Z$/) } });
    expect((await engine.getSchedule("nightly")).status).toBe("active");
    const pauses = await engine.store.listAudit({ action: "schedule.pause" });
    expect(pauses.map((e) => [e.actor, e.target])).toEqual([["token:root", "nightly"]]);
    expect((await engine.store.listAudit({ action: "schedule.resume" })).map((e) => e.target)).toEqual(["nightly"]);

    const unknown = await post("/schedules/nope/pause", {}, as(admin));
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "SCHEDULE_NOT_FOUND"]);
    expect(unknown.body.error.message).toContain('"nope"');
    const bad = await post(`/schedules/${encodeURIComponent("no spaces")}/pause`, {}, as(admin));
    expect([bad.status, bad.body.error.code]).toEqual([400, "INVALID_INPUT"]);
    expect(bad.body.error.message).toMatch(/Invalid path: name.*letters, digits/);
    const extra = await post("/schedules/nightly/pause", { force: true }, as(admin));
    expect([extra.status, extra.body.error.message]).toEqual([400, expect.stringContaining("force")]);
  });

  it(`retires and reinstates a version: admin only, bad bodies named, audited under the CLI's names (${kind})`, async () => {
    const { engine, app, admin, writer, post, as } = await setup();
    expect((await post("/versions/retire", { workflow: "paced", version: "1" }, as(writer))).status).toBe(403);
    const foreign = await post("/versions/retire", { workflow: "paced", version: "1" }, { ...as(admin), "sec-fetch-site": "cross-site" });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, "CROSS_ORIGIN_REFUSED"]);
    const missing = await post("/versions/retire", { workflow: "paced" }, as(admin));
    expect([missing.status, missing.body.error.code]).toEqual([400, "INVALID_INPUT"]);
    expect(missing.body.error.message).toMatch(/Invalid body: version/);
    const notJson = await post("/versions/retire", "{workflow:", as(admin));
    expect(notJson.status).toBe(400);
    expect((await engine.listVersions()).find((v) => v.workflow === "paced")!.drained).toBe(false);

    const retired = await post("/versions/retire", { workflow: "paced", version: "1" }, as(admin));
    expect(versionActionResponse.parse(retired.body)).toEqual({ workflow: "paced", version: "1", retired: true, changed: true, known: true });
    expect((await engine.listVersions()).find((v) => v.workflow === "paced")!.drained).toBe(true);
    expect((await post("/versions/retire", { workflow: "paced", version: "1" }, as(admin))).body).toMatchObject({ changed: false });
    const client = new CairnClient({ baseUrl: "http://127.0.0.1:4000", headers: as(admin), fetch: async (input, init) => app.request(String(input), init) });
    expect(await client.reinstateVersion({ workflow: "paced", version: "1" })).toMatchObject({ retired: false, changed: true });
    expect((await client.retireVersion({ workflow: "typo", version: "1" })).known).toBe(false);
    expect((await engine.store.listAudit({ action: "version.drain" })).map((e) => [e.actor, e.target])).toEqual([
      ["token:root", "typo@1"],
      ["token:root", "paced@1"],
    ]);
    expect((await engine.store.listAudit({ action: "version.undrain" })).map((e) => e.target)).toEqual(["paced@1"]);
    expect((await client.pauseSchedule("nightly")).schedule.status).toBe("paused");
    expect((await client.listSchedules()).map((s) => [s.name, s.status])).toEqual([["nightly", "paused"]]);
  });
}
