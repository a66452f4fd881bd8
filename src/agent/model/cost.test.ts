import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isCairnError } from "../../core/errors.js";
import { costOf, formatMicroUsd, priceFor, priceKeys } from "./cost.js";
import { estimateCost, estimateTokens, estimateTextTokens } from "./estimate.js";
import { PRICE_TABLE } from "./prices.js";
import type { Usage } from "./schemas.js";

const usage = (u: Partial<Usage>): Usage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, ...u });

describe("costOf", () => {
  it("prices each kind in integer micro-dollars", () => {
    // $3/M in, $15/M out, $0.30/M cache read, $3.75/M cache write
    expect(costOf("claude-sonnet-4-5", usage({ inputTokens: 1000, outputTokens: 500 }))).toBe(10_500);
    expect(costOf("claude-sonnet-4-5", usage({ cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 }))).toBe(4_050_000);
    expect(costOf("gpt-4o-mini", usage({ cacheReadTokens: 1_000_000 }))).toBe(75_000);
  });

  it("bills reasoning as output only once", () => {
    expect(costOf("gpt-5", usage({ outputTokens: 1000, reasoningTokens: 800 }))).toBe(costOf("gpt-5", usage({ outputTokens: 1000 })));
  });

  it("rounds up to the next micro-dollar, without float error", () => {
    expect(costOf("gpt-5-nano", usage({ inputTokens: 1 }))).toBe(1); // 0.05 µ$ → 1
    expect(costOf("gpt-4o-mini", usage({ inputTokens: 3 }))).toBe(1); // 0.45 µ$ → 1
    expect(costOf("claude-sonnet-4-5", usage({}))).toBe(0);
    expect(costOf("gpt-4o-mini", usage({ inputTokens: 20 }))).toBe(3); // exactly 3.0, not 3.0000000004 → 4
  });

  it("is exact and additive-safe for large counts (property)", () => {
    fc.assert(
      fc.property(fc.nat({ max: 2_000_000_000 }), fc.nat({ max: 2_000_000_000 }), (input, output) => {
        const micro = costOf("claude-haiku-4-5", usage({ inputTokens: input, outputTokens: output }));
        // $1/M in and $5/M out are whole micro-dollars per token
        return micro === input + 5 * output;
      }),
    );
  });

  it("matches dated, prefixed and dotted ids to the table", () => {
    for (const id of [
      "claude-sonnet-4-5-20250929",
      "anthropic/claude-sonnet-4.5",
      "claude-sonnet-4-5@20250929",
      "anthropic.claude-sonnet-4-5-20250929-v1:0",
      "claude-sonnet-4-5-latest",
    ])
      expect(priceFor(id), id).toEqual(PRICE_TABLE.models["claude-sonnet-4-5"]);
    expect(priceFor("gpt-5-mini-2025-08-07")).toEqual(PRICE_TABLE.models["gpt-5-mini"]);
    expect(priceFor("openai/gpt-4.1")).toEqual(PRICE_TABLE.models["gpt-4.1"]);
    // no prefix matching: a pro model is not priced as its base model
    expect(priceFor("gpt-5.4-pro")).toBeUndefined();
    expect(priceKeys("Anthropic/Claude-Opus-4.5")).toContain("claude-opus-4-5");
  });

  it("refuses an unknown model with a clear error naming the fix", () => {
    const error = (() => {
      try {
        return costOf("my-finetune", usage({ inputTokens: 1 }));
      } catch (e) {
        return e;
      }
    })();
    expect(isCairnError(error, "MODEL_PRICE_UNKNOWN")).toBe(true);
    expect((error as Error).message).toContain(`"my-finetune" in price table ${PRICE_TABLE.version}`);
  });

  it("applies overrides first; cache prices default to the input price", () => {
    expect(costOf("my-finetune", usage({ inputTokens: 1_000_000, cacheReadTokens: 1_000_000 }), { prices: { "my-finetune": { input: 2, output: 8 } } })).toBe(
      4_000_000,
    );
    expect(costOf("claude-sonnet-4-5-20250929", usage({ inputTokens: 1_000_000 }), { prices: { "claude-sonnet-4-5": { input: 1, output: 1 } } })).toBe(
      1_000_000,
    );
    expect(() => costOf("x", usage({}), { prices: { x: { input: -1, output: 1 } } })).toThrow(/Invalid price override/);
    expect(() => costOf("x", usage({}), { prices: { x: { input: 0.0000001, output: 1 } } })).toThrow(/6 decimal places/);
  });

  it("ships a versioned, dated table with sane prices", () => {
    expect(PRICE_TABLE.version).toMatch(/^\d{4}-\d{2}-\d{2}\.\d+$/);
    expect(PRICE_TABLE.effectiveDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const [id, p] of Object.entries(PRICE_TABLE.models)) {
      for (const v of Object.values(p)) expect(v, id).toBeGreaterThanOrEqual(0);
      expect(p.cacheRead, id).toBeLessThanOrEqual(p.input);
      expect(p.output, id).toBeGreaterThanOrEqual(p.input);
    }
    expect(costOf("scripted", usage({ inputTokens: 1e6, outputTokens: 1e6 }))).toBe(0);
  });

  it("formats micro-dollars for display", () => {
    expect(formatMicroUsd(10_500)).toBe("$0.010500");
    expect(formatMicroUsd(4_050_000)).toBe("$4.050000");
  });
});

describe("estimateTokens / estimateCost", () => {
  it("counts chars/4 for ASCII and one token per non-ASCII character", () => {
    expect(estimateTextTokens("")).toBe(0);
    expect(estimateTextTokens("abcd")).toBe(1);
    expect(estimateTextTokens("abcde")).toBe(2);
    expect(estimateTextTokens("日本語")).toBe(3);
  });

  it("adds system, tools, and every message and block kind", () => {
    const base = estimateTokens({ messages: [{ role: "user", content: "Hello there" }] });
    expect(base).toEqual({ inputTokens: 4 + 3, maxOutputTokens: 4096 });
    const full = estimateTokens({
      system: "Be brief.",
      tools: [{ name: "get_weather", description: "Weather for a city", inputSchema: { type: "object" } }],
      maxTokens: 100,
      messages: [
        { role: "user", content: "Hello there" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm hmm", signature: "s".repeat(400) },
            { type: "redacted_thinking", data: "abcdefgh" },
            { type: "tool_use", id: "t", name: "get_weather", input: { city: "Paris" } },
          ],
        },
        { role: "tool", content: [{ type: "tool_result", toolUseId: "t", content: "18 degrees" }] },
      ],
    });
    // system 4+3, tool 16+3+5+5, user 4+3, assistant 4+(2+2+(8+3+4)), tool 4+8+3
    expect(full).toEqual({ inputTokens: 7 + 29 + 7 + 23 + 15, maxOutputTokens: 100 });
  });

  it("is monotonic: a longer conversation never estimates lower", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 20 }), fc.string(), (texts, extra) => {
        const messages = texts.map((t) => ({ role: "user" as const, content: t }));
        return estimateTokens({ messages: [...messages, { role: "user", content: extra }] }).inputTokens > estimateTokens({ messages }).inputTokens;
      }),
    );
  });

  it("estimates the worst-case cost: prompt as fresh input plus maxTokens of output", () => {
    const request = { messages: [{ role: "user" as const, content: "x".repeat(4000) }], maxTokens: 1000 };
    // 1004 input tokens × $3/M + 1000 × $15/M = 3012 + 15000 µ$
    expect(estimateCost("claude-sonnet-4-5", request)).toBe(18_012);
    expect(() => estimateCost("nope", request)).toThrow(/No price for model "nope"/);
  });
});
