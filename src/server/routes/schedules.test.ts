import { describe, expect, it } from "vitest";
import { testEngine } from "../../../test/support/engines.js";
import { TEST_WORKFLOWS } from "../../../test/support/server.js";
import { apiScheduleSchema } from "../../core/api-schemas.js";
import { createServer } from "../create-server.js";

describe("GET /schedules", () => {
  it("lists schedules with their next fire time, matching the documented schema", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    const workflow = TEST_WORKFLOWS[0]!.name;
    await engine.schedule({ name: "hourly", workflow, cron: "0 * * * *", timezone: "America/New_York", input: { a: 1 } });
    await engine.pauseSchedule((await engine.schedule({ name: "daily", workflow, cron: "0 3 * * *" })).name);
    const app = createServer(engine);
    const res = await app.request("/schedules");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { schedules: unknown[] };
    expect(body.schedules.map((s) => apiScheduleSchema.parse(s))).toEqual([
      expect.objectContaining({ name: "daily", status: "paused", nextTickAt: null }),
      expect.objectContaining({
        name: "hourly",
        status: "active",
        timezone: "America/New_York",
        input: { a: 1 },
        nextTickAt: expect.stringMatching(/:00:00\.000Z$/),
      }),
    ]);
  });
});
