import { describe, expect, it } from "vitest";
import { errorPattern } from "./error-pattern.js";

describe("errorPattern", () => {
  it("masks numbers, ids, hex and times so messages that differ only there group together", () => {
    expect(errorPattern("order o-1042 failed after 3 attempts (trace 9f86d081884c7d65)")).toBe("order <id> failed after <n> attempts (trace <hex>)");
    expect(errorPattern("upstream returned 503")).toBe(errorPattern("upstream returned 429"));
    expect(errorPattern("run 4b1e0a52-6f0e-4c7e-9f1a-2b3c4d5e6f70 lost its lease")).toBe("run <id> lost its lease");
    expect(errorPattern("deadline 2026-11-26T03:00:00.000Z passed at 0xdeadbeef")).toBe("deadline <time> passed at <hex>");
    expect(errorPattern("user_17 and r7 not found")).toBe("<id> and <id> not found");
    const many = new Set(Array.from({ length: 100 }, (_, i) => errorPattern(`quota exceeded for tenant t-${i}: ${i * 37} of 100 calls`)));
    expect([...many]).toEqual(["quota exceeded for tenant <id>: <n> of <n> calls"]);
  });

  it("keeps the words that say what went wrong, and bounds the result", () => {
    expect(errorPattern("card declined by the bank")).toBe("card declined by the bank");
    expect(errorPattern("x ".repeat(500)).length).toBeLessThanOrEqual(200);
  });
});
