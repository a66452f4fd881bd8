// Incoming webhook signatures over real HTTP (127.0.0.1, SQLite): the HMAC covers the raw bytes
// and a signed timestamp; replays outside the window, bodies that differ only in bytes UTF-8
// decoding would merge, and the old unstamped form are refused; a signed BOM body is accepted.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { TEST_WORKFLOWS, testServer } from "../../test/support/server.js";
import { verifyWebhookSignature, webhookSignature } from "../engine/webhook-signature.js";

const SECRET = "whsec-0123456789abcdef";
const now = () => Math.floor(Date.now() / 1000);

async function setup() {
  const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
  await engine.start("paced", { steps: 1 }, { runId: "w" });
  const server = await testServer(engine, {
    webhooks: { ci: { secret: SECRET, runId: (b: any) => b.run, type: "go", eventId: (b: any) => String(b.delivery), toleranceSeconds: 60 } },
  });
  const post = async (body: Buffer | string, headers: Record<string, string>) => {
    const res = await fetch(`${server.url}/webhooks/ci`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    return { status: res.status, body: (await res.json()) as any };
  };
  const delivered = async () => (await engine.store.listInbox("w")).map((e) => e.eventId);
  return { post, delivered };
}

describe("webhook signatures", () => {
  it("cover the raw bytes: 0xFE does not pass under 0xFF's signature, and a signed BOM body is accepted", async () => {
    const { post, delivered } = await setup();
    const t = now();
    const withFF = Buffer.concat([Buffer.from('{"run":"w","delivery":"d-ff","x":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const withFE = Buffer.from(withFF);
    withFE[withFE.indexOf(0xff)] = 0xfe;
    const forged = await post(withFE, { "cairn-signature": webhookSignature(SECRET, withFF, t) });
    expect([forged.status, forged.body.error.code]).toEqual([401, "UNAUTHORIZED"]);
    expect(forged.body.error.message).toContain("does not match");
    // Signed as it is, invalid UTF-8 is a clear 400, not silently replaced.
    expect((await post(withFF, { "cairn-signature": webhookSignature(SECRET, withFF, t) })).status).toBe(400);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"run":"w","delivery":"d-bom"}')]);
    const accepted = await post(bom, { "cairn-signature": webhookSignature(SECRET, bom, t) });
    expect([accepted.status, accepted.body.eventId]).toEqual([202, "d-bom"]);
    expect(await delivered()).toEqual(["d-bom"]);
  });

  it("carry a signed timestamp: outside the tolerance it is a replay (401); the deprecated header name still works; unstamped is refused", async () => {
    const { post, delivered } = await setup();
    const body = JSON.stringify({ run: "w", delivery: "d-1" });
    const old = await post(body, { "cairn-signature": webhookSignature(SECRET, body, now() - 3600) });
    expect([old.status, old.body.error.message]).toEqual([401, expect.stringContaining("outside the tolerance window")]);
    const future = await post(body, { "cairn-signature": webhookSignature(SECRET, body, now() + 3600) });
    expect(future.status).toBe(401);
    // Moving the timestamp breaks the signature.
    const stamped = webhookSignature(SECRET, body, now() - 3600).replace(/^t=\d+/, `t=${now()}`);
    expect((await post(body, { "cairn-signature": stamped })).body.error.message).toContain("does not match");
    const unstamped = `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
    expect((await post(body, { "x-cairn-signature": unstamped })).status).toBe(401);
    expect(await delivered()).toEqual([]);
    const legacyName = await post(body, { "x-cairn-signature": webhookSignature(SECRET, body, now()) });
    expect(legacyName.status).toBe(202);
    expect(await delivered()).toEqual(["d-1"]);
  });

  it("verifyWebhookSignature (for receivers of outbox deliveries) says what is wrong", () => {
    const body = Buffer.from('{"a":1}');
    const header = webhookSignature(SECRET, body, 1_000_000);
    expect(verifyWebhookSignature(SECRET, body, header, { nowMs: 1_000_000_000 })).toBeUndefined();
    expect(verifyWebhookSignature(SECRET, body, header, { nowMs: 1_000_301_000 })).toBe("expired");
    expect(verifyWebhookSignature("other", body, header, { nowMs: 1_000_000_000 })).toBe("mismatch");
    expect(verifyWebhookSignature(SECRET, body, "sha256=00", { nowMs: 1_000_000_000 })).toBe("malformed");
    expect(verifyWebhookSignature(SECRET, body, undefined)).toBe("missing");
  });
});
