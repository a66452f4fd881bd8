import { describe, expect, it } from "vitest";
import type { ScheduleDefinitionRecord, ScheduleState } from "../../core/schedule.js";
import type { Store } from "../../core/store.js";
import { T0 } from "./harness.js";

const DEF: ScheduleDefinitionRecord = {
  name: "nightly",
  workflow: "report",
  cron: "0 3 * * *",
  timezone: "Europe/Berlin",
  input: '{"v":1}',
  overlap: "skip",
  catchUp: "latest",
  maxCatchUp: 100,
  graceMs: 60_000,
};

const STATE: ScheduleState = {
  cursorAt: T0 + 5000,
  nextTickAt: T0 + 9000,
  lastTickAt: T0 + 5000,
  lastRunId: "schedule:nightly:x",
  bufferedTickAt: T0 + 4000,
  firedCount: 3,
  skippedCount: 2,
  missedCount: 1,
};

/** Schedules: saved definitions keep their state; one scheduler lease at a time; fenced state writes; pause and resume. */
export function schedulesSpec(store: () => Store): void {
  describe("schedules", () => {
    it("saves a schedule with its cursor at now; saving it again changes nothing; redefining keeps state and bumps the epoch", async () => {
      const created = await store().saveSchedule(DEF, T0);
      expect(created).toMatchObject({ ...DEF, paused: false, cursorAt: T0, lastTickAt: null, firedCount: 0, owner: null, epoch: 0, createdAt: T0 });
      expect(await store().saveSchedule(DEF, T0 + 1)).toEqual(created);

      const claimed = await store().claimSchedule("nightly", "w1", T0 + 10, 1000);
      expect(await store().updateScheduleState("nightly", "w1", claimed!.epoch, STATE, T0 + 20)).toBe(true);
      const redefined = await store().saveSchedule({ ...DEF, cron: "0 4 * * *", input: '{"v":2}' }, T0 + 30);
      expect(redefined).toMatchObject({ ...STATE, nextTickAt: null, cron: "0 4 * * *", input: '{"v":2}', owner: null, leaseExpiresAt: null });
      expect(redefined.epoch).toBeGreaterThan(claimed!.epoch);
      // The old holder is fenced out.
      expect(await store().updateScheduleState("nightly", "w1", claimed!.epoch, { ...STATE, firedCount: 9 }, T0 + 40)).toBe(false);
      expect((await store().getSchedule("nightly"))!.firedCount).toBe(3);
      expect(await store().getSchedule("nope")).toBeUndefined();
    });

    it("lists by name and deletes", async () => {
      await store().saveSchedule({ ...DEF, name: "b" }, T0);
      await store().saveSchedule({ ...DEF, name: "a" }, T0);
      expect((await store().listSchedules()).map((s) => s.name)).toEqual(["a", "b"]);
      expect(await store().deleteSchedule("a")).toBe(true);
      expect(await store().deleteSchedule("a")).toBe(false);
      expect((await store().listSchedules()).map((s) => s.name)).toEqual(["b"]);
    });

    it("one scheduler holds the lease until it expires; renewing keeps the epoch, taking over bumps it", async () => {
      await store().saveSchedule(DEF, T0);
      const first = await store().claimSchedule("nightly", "w1", T0, 1000);
      expect(first).toMatchObject({ owner: "w1", leaseExpiresAt: T0 + 1000, epoch: 1 });
      expect(await store().claimSchedule("nightly", "w2", T0 + 999, 1000)).toBeUndefined();
      const renewed = await store().claimSchedule("nightly", "w1", T0 + 500, 1000);
      expect(renewed).toMatchObject({ owner: "w1", leaseExpiresAt: T0 + 1500, epoch: 1 });
      expect(await store().claimSchedule("nightly", "w2", T0 + 1499, 1000)).toBeUndefined();
      const taken = await store().claimSchedule("nightly", "w2", T0 + 1500, 1000);
      expect(taken).toMatchObject({ owner: "w2", epoch: 2 });
      expect(await store().updateScheduleState("nightly", "w1", 1, STATE, T0 + 1600)).toBe(false);
      expect(await store().updateScheduleState("nightly", "w2", 2, STATE, T0 + 1600)).toBe(true);
      expect(await store().getSchedule("nightly")).toMatchObject({ ...STATE, updatedAt: T0 + 1600 });
      expect(await store().claimSchedule("unknown", "w1", T0, 1000)).toBeUndefined();
    });

    it("racing claims: exactly one wins", async () => {
      await store().saveSchedule(DEF, T0);
      const results = await Promise.all(["a", "b", "c", "d"].map((owner) => store().claimSchedule("nightly", owner, T0, 1000)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it("pausing fences out the holder and stops claims; resuming moves a stale cursor to now", async () => {
      await store().saveSchedule(DEF, T0);
      const held = await store().claimSchedule("nightly", "w1", T0, 60_000);
      const paused = await store().setSchedulePaused("nightly", true, T0 + 100);
      expect(paused).toMatchObject({ paused: true, owner: null, cursorAt: T0 });
      expect(paused!.epoch).toBeGreaterThan(held!.epoch);
      expect(await store().updateScheduleState("nightly", "w1", held!.epoch, STATE, T0 + 200)).toBe(false);
      expect(await store().claimSchedule("nightly", "w1", T0 + 300, 1000)).toBeUndefined();
      const resumed = await store().setSchedulePaused("nightly", false, T0 + 50_000);
      expect(resumed).toMatchObject({ paused: false, cursorAt: T0 + 50_000 });
      expect(await store().claimSchedule("nightly", "w1", T0 + 50_001, 1000)).toMatchObject({ owner: "w1" });
      expect(await store().setSchedulePaused("unknown", true, T0)).toBeUndefined();
    });
  });
}
