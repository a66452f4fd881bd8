import { describe, expect, it } from "vitest";
import { isCairnError } from "../core/errors.js";
import { parseScheduleRunId, scheduleRunId } from "../core/schedule.js";
import { dueTicks, nextTick, parseCron } from "./cron.js";
import { defineSchedule } from "./schedule.js";
import { defineWorkflow } from "./define-workflow.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const at = (text: string) => Date.parse(text);
const MIN = 60_000;

describe("next tick in a time zone", () => {
  it("02:30 daily in Europe/Berlin across spring-forward: the skipped local time fires once, at the first valid time after the gap", () => {
    const cron = parseCron("30 2 * * *", "Europe/Berlin");
    const ticks: (string | null)[] = [];
    let t: number | null = at("2026-03-27T12:00:00Z");
    for (let i = 0; i < 3; i++) ticks.push(iso((t = nextTick(cron, t!))));
    // 28 March: CET (UTC+1); 29 March: 02:00–03:00 does not exist, fires at 03:00 CEST; 30 March: CEST (UTC+2).
    expect(ticks).toEqual(["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
  });

  it("02:30 daily in Europe/Berlin across fall-back: a repeated local time with a fixed hour fires once, at its first occurrence", () => {
    const cron = parseCron("30 2 * * *", "Europe/Berlin");
    const ticks: (string | null)[] = [];
    let t: number | null = at("2026-10-24T00:00:00Z");
    for (let i = 0; i < 3; i++) ticks.push(iso((t = nextTick(cron, t!))));
    // 25 October: 02:30 happens at 00:30Z (CEST) and again at 01:30Z (CET): only the first fires.
    expect(ticks).toEqual(["2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });

  it("hourly in Europe/Berlin across fall-back: every real hour fires, so 02:00 local fires twice (CEST, then CET)", () => {
    const cron = parseCron("0 * * * *", "Europe/Berlin");
    const ticks: (string | null)[] = [];
    let t: number | null = at("2026-10-24T23:30:00Z");
    for (let i = 0; i < 3; i++) ticks.push(iso((t = nextTick(cron, t!))));
    // 00:00Z is 02:00 CEST, 01:00Z is 02:00 CET, 02:00Z is 03:00 CET.
    expect(ticks).toEqual(["2026-10-25T00:00:00.000Z", "2026-10-25T01:00:00.000Z", "2026-10-25T02:00:00.000Z"]);
  });

  it("09:00 on weekdays in America/New_York follows the offset change (EST → EDT)", () => {
    const cron = parseCron("0 9 * * 1-5", "America/New_York");
    // Friday 6 March 2026 is EST (UTC-5); DST starts Sunday 8 March; Monday 9 March is EDT (UTC-4).
    expect(iso(nextTick(cron, at("2026-03-06T00:00:00Z")))).toBe("2026-03-06T14:00:00.000Z");
    expect(iso(nextTick(cron, at("2026-03-06T14:00:00Z")))).toBe("2026-03-09T13:00:00.000Z");
  });

  it("six fields are seconds", () => {
    expect(iso(nextTick(parseCron("*/1 * * * * *", "UTC"), at("2026-01-01T00:00:00.500Z")))).toBe("2026-01-01T00:00:01.000Z");
  });
});

describe("due ticks and catch-up", () => {
  const cron = parseCron("* * * * *", "UTC");
  const T = at("2030-01-01T00:00:00Z");
  const minutes = (ticks: number[]) => ticks.map((t) => (t - T) / MIN);

  it("on-time ticks always fire; none drops every missed one", () => {
    expect(dueTicks(cron, T, T + 2 * MIN, MIN, "none", 100)).toEqual({ fire: [T + MIN, T + 2 * MIN], dropped: 0, cursor: T + 2 * MIN });
    const due = dueTicks(cron, T, T + 10.5 * MIN, MIN, "none", 100);
    expect(minutes(due.fire)).toEqual([10]);
    expect(due.dropped).toBe(9);
  });

  it("latest fires the newest missed tick, unless an on-time tick stands for it", () => {
    const withOnTime = dueTicks(cron, T, T + 10.5 * MIN, MIN, "latest", 100);
    expect([minutes(withOnTime.fire), withOnTime.dropped]).toEqual([[10], 9]);
    const onlyMissed = dueTicks(cron, T, T + 10.5 * MIN, 10_000, "latest", 100);
    expect([minutes(onlyMissed.fire), onlyMissed.dropped, onlyMissed.cursor]).toEqual([[10], 9, T + 10.5 * MIN - 10_001]);
    const down = dueTicks(cron, T, T + 10 * MIN + 20_000, 10_000, "latest", 100);
    expect([minutes(down.fire), down.dropped]).toEqual([[10], 9]);
  });

  it("all fires the newest maxCatchUp missed ticks, oldest first", () => {
    const due = dueTicks(cron, T, T + 10.5 * MIN, MIN, "all", 5);
    expect(minutes(due.fire)).toEqual([5, 6, 7, 8, 9, 10]);
    expect(due.dropped).toBe(4);
  });
});

describe("defineSchedule", () => {
  const wf = defineWorkflow({ name: "wf", version: "1", run: async () => 1 });
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return isCairnError(error) ? `${error.code}: ${error.message}` : `not a Cairn error: ${String(error)}`;
    }
    return "no error";
  };

  it("a bad cron expression is an INVALID_SCHEDULE naming it", () => {
    expect(code(() => defineSchedule({ name: "s", workflow: wf, cron: "61 * * * *" }))).toMatch(
      /^INVALID_SCHEDULE: Schedule "s" is invalid: cron "61 \* \* \* \*" does not parse/,
    );
    expect(code(() => defineSchedule({ name: "s", workflow: wf, cron: "every day" }))).toMatch(/^INVALID_SCHEDULE/);
  });

  it("an unknown time zone is an INVALID_SCHEDULE naming the field", () => {
    expect(code(() => defineSchedule({ name: "s", workflow: wf, cron: "* * * * *", timezone: "Mars/Olympus" }))).toMatch(
      /^INVALID_SCHEDULE: .*timezone.*not a known IANA time zone/,
    );
  });

  it("bad options are INVALID_SCHEDULE", () => {
    expect(code(() => defineSchedule({ name: "s", workflow: wf, cron: "* * * * *", overlap: "queue" as never }))).toMatch(/^INVALID_SCHEDULE: .*overlap/);
    expect(code(() => defineSchedule({ name: "bad name", workflow: wf, cron: "* * * * *" }))).toMatch(/^INVALID_SCHEDULE: .*name/);
    expect(code(() => defineSchedule({ name: "s", workflow: wf, cron: "* * * * *", maxCatchUp: 0 }))).toMatch(/^INVALID_SCHEDULE: .*maxCatchUp/);
    expect(code(() => defineSchedule({ name: "s", workflow: wf, cron: "* * * * *", input: () => 1 }))).toMatch(/^INVALID_SCHEDULE: .*input/);
  });

  it("defaults: UTC, skip, latest, 100, 60 s", () => {
    expect(defineSchedule({ name: "s", workflow: wf, cron: "* * * * *" })).toMatchObject({
      workflow: "wf",
      timezone: "UTC",
      overlap: "skip",
      catchUp: "latest",
      maxCatchUp: 100,
      graceMs: 60_000,
    });
  });

  it("tick run ids carry the tick time", () => {
    const runId = scheduleRunId("nightly", at("2030-01-01T03:00:00Z"));
    expect(runId).toBe("schedule:nightly:2030-01-01T03:00:00.000Z");
    expect(parseScheduleRunId(runId)).toEqual({ schedule: "nightly", scheduledAt: new Date("2030-01-01T03:00:00Z") });
    expect(parseScheduleRunId("thread-42")).toBeUndefined();
  });
});
