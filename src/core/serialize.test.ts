import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decode, decodeKeepingSecrets, encode, hasSecretTag, StoredText } from "./serialize.js";
import { mayBeMarker, parseMarker } from "./payloads.js";
import { Secret } from "./secret.js";
import { taggedJson } from "../../test/support/tagged-json.js";

/** What a value is once it has crossed HTTP as JSON (e.g. -0 becomes 0). */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe("the journal codec", () => {
  it("round-trips any JSON exactly, including objects shaped like its own tags at any depth", () => {
    fc.assert(
      fc.property(taggedJson, (value) => {
        const json = asJson(value);
        expect(decode(encode(json))).toStrictEqual(json);
        expect(decodeKeepingSecrets(encode(json))).toStrictEqual(json);
      }),
      { numRuns: 500, seed: 15 },
    );
  });

  it("never writes user data as a tag, a secret mark or a top-level payload marker", () => {
    fc.assert(
      fc.property(taggedJson, (value) => {
        const text = encode(asJson(value));
        expect(hasSecretTag(text)).toBe(false);
        if (mayBeMarker(text)) expect(parseMarker(text)).toBeNull();
      }),
      { numRuns: 300, seed: 16 },
    );
  });

  it("still carries its own tags next to escaped user objects", () => {
    const value = { when: new Date(5), big: 7n, set: new Set([{ $cairn: "set", v: 1 }]), map: new Map([["k", { $cairn: "date" }]]), inf: Infinity };
    const back = decode<typeof value>(encode(value));
    expect(back.when).toEqual(new Date(5));
    expect(back.big).toBe(7n);
    expect([...back.set]).toEqual([{ $cairn: "set", v: 1 }]);
    expect(back.map.get("k")).toEqual({ $cairn: "date" });
    expect(back.inf).toBe(Infinity);
    expect(decodeKeepingSecrets<{ s: Secret }>(encode({ s: new Secret({ $cairn: "x" }) })).s.value).toEqual({ $cairn: "x" });
  });

  it("keeps a __proto__ key as plain data", () => {
    const value = JSON.parse('{"$cairn":"set","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const back = decode<Record<string, unknown>>(encode(value));
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.keys(back)).toEqual(["$cairn", "__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("decodes journals written before the escape as before (no `esc` tag in them)", () => {
    expect(decode('{"a":{"$cairn":"date","v":5},"b":{"$cairn":"set","v":[1]},"c":{"$cairn":"other","v":1}}')).toEqual({
      a: new Date(5),
      b: new Set([1]),
      c: { $cairn: "other", v: 1 },
    });
  });

  it("writes a stored marker verbatim (the payload layer's own objects)", () => {
    const marker = '{"$cairn":"blob","sha256":"' + "a".repeat(64) + '","size":3}';
    expect(encode({ input: new StoredText(marker) })).toBe(`{"input":${marker}}`);
    expect(encode(new StoredText(marker))).toBe(marker);
  });

  it("writes plain JSON as JSON.stringify does, and still tags what sits deep inside plain data", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const json = asJson(value);
        expect(encode(json)).toBe(JSON.stringify(json));
      }),
      { numRuns: 300, seed: 17 },
    );
    let deep: unknown = new Date(7);
    for (let i = 0; i < 40; i++) deep = i % 2 ? { d: deep } : [deep];
    expect(decode(encode(deep))).toStrictEqual(deep);
    const holes = [1, , 3]; // eslint-disable-line no-sparse-arrays
    expect(encode({ a: [1, undefined], b: holes, c: { d: 1n, e: -Infinity }, f: [{ $cairn: "date", v: 1 }] })).toBe(
      '{"a":[1,{"$cairn":"undef"}],"b":[1,{"$cairn":"undef"},3],"c":{"d":{"$cairn":"bigint","v":"1"},"e":{"$cairn":"num","v":"-Infinity"}},' +
        '"f":[{"$cairn":"esc","v":[["$cairn","date"],["v",1]]}]}',
    );
    const withToJson = Object.assign([1], { toJSON: () => ({ when: new Date(3) }) });
    expect(decode(encode({ x: withToJson }))).toStrictEqual({ x: { when: new Date(3) } });
    expect(encode(Object.assign(Object.create(null) as object, { a: 1 }))).toBe('{"a":1}');
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { cycle };
    expect(() => encode(cycle)).toThrow(TypeError);
  });
});
