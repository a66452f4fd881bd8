import { describe, expect, it } from "vitest";
import { metricsTagsOf } from "./commands/serve.js";

describe("cairn serve --metrics-tag", () => {
  it("reads key=v1,v2 flags into the bounded label set, merging repeats of a key", () => {
    expect(metricsTagsOf([])).toBeUndefined();
    expect({ ...metricsTagsOf(["tier=free,pro", "region=eu", "tier=enterprise"]) }).toEqual({ tier: ["free", "pro", "enterprise"], region: ["eu"] });
  });

  it.each(["tier", "=free", "tier=", "1tier=free", "ti er=free"])("refuses %j with the expected shape", (flag) => {
    expect(() => metricsTagsOf([flag])).toThrow(/--metrics-tag must be key=value\[,value…\]/);
  });
});
