import { describe, expect, it } from "vitest";
import { LiveDeltas } from "./live-deltas.js";

describe("LiveDeltas", () => {
  it("coalesces an attempt's pieces per kind and tool call, in order, marked catchUp", () => {
    const live = new LiveDeltas();
    const d = (data: unknown, attempt = 1) => live.record("r", { opKey: "m", attempt, data });
    d({ kind: "thinking", text: "Let me " });
    d({ kind: "thinking", text: "think." });
    d({ kind: "text", text: "Hello " });
    d({ kind: "text", text: "world." });
    d({ kind: "tool-input", id: "c1", name: "t", text: '{"a":' });
    d({ kind: "tool-input", id: "c1", name: "t", text: "1}" });
    d({ kind: "tool-input", id: "c2", name: "t", text: "{}" });
    expect(live.snapshot("r").map((x) => x.data)).toEqual([
      { kind: "thinking", text: "Let me think." },
      { kind: "text", text: "Hello world." },
      { kind: "tool-input", id: "c1", name: "t", text: '{"a":1}' },
      { kind: "tool-input", id: "c2", name: "t", text: "{}" },
    ]);
    expect(live.snapshot("r").every((x) => x.catchUp === true && x.attempt === 1)).toBe(true);
  });

  it("a new attempt replaces the old one's output; the step's outcome and the run's end drop it", () => {
    const live = new LiveDeltas();
    live.record("r", { opKey: "m", attempt: 1, data: { kind: "text", text: "old" } });
    live.record("r", { opKey: "m", attempt: 2, data: { kind: "text", text: "new" } });
    live.record("r", { opKey: "n", attempt: 1, data: { kind: "text", text: "other" } });
    expect(live.snapshot("r").map((x) => [x.opKey, x.attempt, (x.data as { text: string }).text])).toEqual([
      ["m", 2, "new"],
      ["n", 1, "other"],
    ]);
    live.forgetStep("r", "m");
    expect(live.snapshot("r")).toHaveLength(1);
    live.forgetRun("r");
    expect(live.snapshot("r")).toEqual([]);
  });

  it("stops catching up an attempt past its bound instead of sending a gap", () => {
    const live = new LiveDeltas();
    live.record("r", { opKey: "m", attempt: 1, data: { kind: "text", text: "x".repeat(999_999) } });
    live.record("r", { opKey: "m", attempt: 1, data: { kind: "text", text: "yy" } });
    live.record("r", { opKey: "m", attempt: 1, data: { kind: "text", text: "z" } });
    expect(live.snapshot("r")).toEqual([]);
  });
});
