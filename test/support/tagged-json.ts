import fc from "fast-check";

const TAGS = ["set", "map", "date", "undef", "bigint", "num", "secret", "esc", "blob", "enc", "lit"] as const;

/** JSON in which `$cairn` keys (with tag names, or anything) occur at any depth, strings with control characters. */
export const taggedJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown>; forged: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.constantFrom(...TAGS, "\u0000", "\u001b]0;title\u0007", "\u2028", '{"$cairn":"set","v":1}'),
    tie("array"),
    tie("object"),
    tie("forged"),
  ),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(fc.constantFrom("$cairn", "v", "__proto__", "sha256", "size"), fc.string({ maxLength: 6 })), tie("value"), { maxKeys: 4 }),
  forged: fc.record({ $cairn: fc.oneof(fc.constantFrom(...TAGS), tie("value")), v: tie("value") }, { requiredKeys: ["$cairn"] }),
})).value;
