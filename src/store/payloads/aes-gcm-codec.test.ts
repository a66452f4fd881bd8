import { describe, expect, it } from "vitest";
import { isCairnError } from "../../core/errors.js";
import { aesGcmCodec, aesGcmCodecFromEnv, peekKeyId } from "./aes-gcm-codec.js";

const K1 = Buffer.alloc(32, 7).toString("base64");
const K2 = Buffer.alloc(32, 9).toString("base64");
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");

describe("aesGcmCodec", () => {
  it("round-trips, with a fresh IV each time and the key id recorded", () => {
    const codec = aesGcmCodec({ keys: { k1: K1 }, currentKeyId: "k1" });
    const a = codec.encode(Buffer.from("hello")) as Uint8Array;
    const b = codec.encode(Buffer.from("hello")) as Uint8Array;
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
    expect(peekKeyId(a)).toBe("k1");
    expect(text(codec.decode(a) as Uint8Array)).toBe("hello");
    expect(Buffer.from(a).includes(Buffer.from("hello"))).toBe(false);
  });

  it("detects a changed ciphertext, tag, IV or key id", () => {
    const ring = aesGcmCodec({ keys: { k1: K1, k2: K1 }, currentKeyId: "k1" });
    const sealed = Buffer.from(ring.encode(Buffer.from("secret payload")) as Uint8Array);
    for (const at of [2, 4, 20, sealed.length - 1]) {
      const changed = Buffer.from(sealed);
      changed[at] = changed[at]! ^ 1;
      expect(() => ring.decode(changed), `byte ${at}`).toThrow();
    }
  });

  it("reads old keys after a rotation and names a missing key", () => {
    const before = aesGcmCodec({ keys: { k1: K1 }, currentKeyId: "k1" });
    const old = before.encode(Buffer.from("old")) as Uint8Array;
    const after = aesGcmCodec({ keys: { k1: K1, k2: K2 }, currentKeyId: "k2" });
    const fresh = after.encode(Buffer.from("new")) as Uint8Array;
    expect(peekKeyId(fresh)).toBe("k2");
    expect(text(after.decode(old) as Uint8Array)).toBe("old");
    expect(text(after.decode(fresh) as Uint8Array)).toBe("new");
    const only2 = aesGcmCodec({ keys: { k2: K2 }, currentKeyId: "k2" });
    let error: unknown;
    try {
      void only2.decode(old);
    } catch (caught) {
      error = caught;
    }
    expect(isCairnError(error, "PAYLOAD_KEY_MISSING")).toBe(true);
    expect((error as Error).message).toContain('"k1"');
  });

  it("refuses keys of the wrong size, bad ids and a current key outside the ring", () => {
    expect(() => aesGcmCodec({ keys: { k1: Buffer.alloc(16).toString("base64") }, currentKeyId: "k1" })).toThrow(/16 bytes; AES-256 needs 32/);
    expect(() => aesGcmCodec({ keys: { "bad id": K1 }, currentKeyId: "bad id" })).toThrow(/not valid/);
    expect(() => aesGcmCodec({ keys: { k1: K1 }, currentKeyId: "k2" })).toThrow(/"k2" is not in the keyring/);
  });
});

describe("aesGcmCodecFromEnv", () => {
  it("is null without keys", () => {
    expect(aesGcmCodecFromEnv({})).toBeNull();
  });

  it("takes a keyring and the current key id", () => {
    const codec = aesGcmCodecFromEnv({ CAIRN_ENCRYPTION_KEYS: `k1:${K1}, k2:${K2}`, CAIRN_ENCRYPTION_KEY_ID: "k2" })!;
    expect(codec.currentKeyId).toBe("k2");
    const first = aesGcmCodecFromEnv({ CAIRN_ENCRYPTION_KEYS: `k1:${K1},k2:${K2}` })!;
    expect(first.currentKeyId).toBe("k1");
    expect(text(codec.decode(first.encode(Buffer.from("x")) as Uint8Array) as Uint8Array)).toBe("x");
  });

  it("takes one key, with or without an id, beside a ring", () => {
    expect(aesGcmCodecFromEnv({ CAIRN_ENCRYPTION_KEY: K1 })!.currentKeyId).toBe("default");
    const codec = aesGcmCodecFromEnv({ CAIRN_ENCRYPTION_KEY: K2, CAIRN_ENCRYPTION_KEY_ID: "new", CAIRN_ENCRYPTION_KEYS: `old:${K1}` })!;
    expect(codec.currentKeyId).toBe("new");
    const old = aesGcmCodecFromEnv({ CAIRN_ENCRYPTION_KEYS: `old:${K1}` })!;
    expect(text(codec.decode(old.encode(Buffer.from("y")) as Uint8Array) as Uint8Array)).toBe("y");
  });

  it("names the malformed variable", () => {
    expect(() => aesGcmCodecFromEnv({ CAIRN_ENCRYPTION_KEYS: "no-colon" })).toThrow(/CAIRN_ENCRYPTION_KEYS/);
    expect(() => aesGcmCodecFromEnv({ CAIRN_ENCRYPTION_KEY: "c2hvcnQ=" })).toThrow(/5 bytes/);
  });
});
