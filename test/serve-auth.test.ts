// Token auth of a real `cairn serve --auth tokens` child process (SQLite file): one-time tickets
// instead of tokens in URLs, dashboard sessions, and tokens that expire.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CairnClient } from "../src/client/client.js";
import { waitFor } from "../src/testing/wait-for.js";
import { runCli } from "./support/cli.js";
import { spawnServe } from "./support/serve-process.js";

async function startServe() {
  const dir = mkdtempSync(join(tmpdir(), "cairn-serve-auth-"));
  const store = `sqlite:${join(dir, "cairn.db")}`;
  const created = await runCli(["token", "create", "--store", store, "--name", "root", "--scope", "read,write,admin", "--json"], { cwd: dir });
  expect(created.code, created.stderr).toBe(0);
  const root = (JSON.parse(created.stdout) as { token: string }).token;
  const cairn = await spawnServe(["--store", store, "--auth", "tokens", "--workflows", resolve("test/fixtures/dashboard-workflows.mjs")]);
  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const res = await fetch(`${cairn.url}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, body: res.headers.get("content-type")?.includes("json") && text ? (JSON.parse(text) as any) : undefined };
  };
  return { dir, store, root, cairn, call };
}

describe("cairn serve --auth tokens: tickets, sessions, expiry", () => {
  it("a ticket stands in for the token on one GET within its life; ?token= and tickets on writes are refused", { timeout: 60_000 }, async () => {
    const { root, cairn, call } = await startServe();
    const reader = (await call("POST", "/tokens", root, { name: "reader", scopes: ["read"] })).body.token as string;
    expect((await call("POST", "/runs", root, { workflow: "brittle", runId: "r1" })).status).toBe(201);
    await waitFor(async () => (await call("GET", "/runs/r1", root)).body.status === "failed", { timeoutMs: 15_000 });

    // A token in the URL is refused, with a message that says what to do instead.
    const inUrl = await call("GET", `/runs/r1/stream?token=${encodeURIComponent(reader)}`);
    expect(inUrl.status).toBe(401);
    expect(inUrl.body.error.message).toContain("ticket");

    // A read token may ask for tickets; without a token nobody may.
    expect((await call("POST", "/auth/tickets", undefined, {})).status).toBe(401);
    const asked = await call("POST", "/auth/tickets", reader, {});
    expect(asked.status).toBe(201);
    const { ticket, expiresAt } = asked.body as { ticket: string; expiresAt: string };
    expect(ticket).toMatch(/^cairn_ticket_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);

    // Once: the stream (EventSource-style, no header) runs to its end; the same ticket again is a 401.
    const stream = await call("GET", `/runs/r1/stream?ticket=${ticket}`);
    expect(stream.status).toBe(200);
    expect(stream.text).toContain("event: end");
    const replay = await call("GET", `/runs/r1/stream?ticket=${ticket}`);
    expect([replay.status, replay.body.error.code]).toEqual([401, "UNAUTHORIZED"]);
    expect(replay.body.error.message).toMatch(/unknown, used or expired/);

    // A ticket carries its token's scopes, no more: the reader's ticket cannot export (admin).
    const readerTicket = (await call("POST", "/auth/tickets", reader, {})).body.ticket as string;
    expect((await call("GET", `/runs/r1/export?ticket=${readerTicket}`)).status).toBe(403);
    // Tickets are for GETs only.
    const writeTicket = (await call("POST", "/auth/tickets", root, {})).body.ticket as string;
    expect((await call("POST", `/runs/r1/retry?ticket=${writeTicket}`, undefined, {})).status).toBe(401);
    // A forged ticket is refused like a used one.
    expect((await call("GET", `/runs?ticket=cairn_ticket_${"A".repeat(43)}`)).status).toBe(401);

    // The typed client's EventSource URL carries a fresh ticket, never the token.
    const client = new CairnClient({ baseUrl: cairn.url, headers: { authorization: `Bearer ${reader}` } });
    const url = await client.streamUrl("r1");
    expect(url).not.toContain(reader);
    expect(url).toMatch(/[?&]ticket=cairn_ticket_/);
    const viaUrl = await fetch(url);
    expect(viaUrl.status).toBe(200);
    expect(await viaUrl.text()).toContain("event: end");
    // Revoking the token ends its unused tickets.
    const pending = (await call("POST", "/auth/tickets", reader, {})).body.ticket as string;
    const readerId = (await call("GET", "/tokens", root)).body.tokens.find((t: any) => t.name === "reader").id as string;
    expect((await call("POST", `/tokens/${readerId}/revoke`, root, {})).status).toBe(200);
    expect((await call("GET", `/runs?ticket=${pending}`)).status).toBe(401);
  });

  it("a ticket opens a dashboard session that acts as its token and ends with it", { timeout: 60_000 }, async () => {
    const { root, call } = await startServe();
    const issued = (await call("POST", "/tokens", root, { name: "ops", scopes: ["read", "write"] })).body as { token: string; record: { id: string } };
    const ticket = (await call("POST", "/auth/tickets", issued.token, {})).body.ticket as string;
    const opened = await call("POST", "/auth/session", undefined, { ticket });
    expect(opened.status).toBe(201);
    const session = opened.body.token as string;
    expect(session).toMatch(/^cairn_session_/);
    expect((await call("POST", "/auth/session", undefined, { ticket })).status).toBe(401); // used up
    expect((await call("GET", "/runs", session)).status).toBe(200);
    expect((await call("POST", "/runs", session, { workflow: "brittle", runId: "by-session" })).status).toBe(201);
    expect((await call("GET", "/tokens", session)).status).toBe(403); // the token's scopes, no more
    const audit = (await call("GET", "/audit?action=run.start", root)).body.entries as any[];
    expect(audit.find((e) => e.target === "by-session").actor).toBe("token:ops");
    expect((await call("POST", `/tokens/${issued.record.id}/revoke`, root, {})).status).toBe(200);
    const after = await call("GET", "/runs", session);
    expect([after.status, after.body.error.code]).toEqual([401, "UNAUTHORIZED"]);
  });

  it("tokens may expire: listed with their expiry, refused with 401 TOKEN_EXPIRED after it", { timeout: 60_000 }, async () => {
    const { dir, store, root, call } = await startServe();
    const cli = await runCli(["token", "create", "--store", store, "--name", "month", "--scope", "read", "--expires-in", "30d", "--json"], { cwd: dir });
    expect(cli.code, cli.stderr).toBe(0);
    const month = JSON.parse(cli.stdout) as { token: string; record: { expiresAt: string } };
    expect(Date.parse(month.record.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect((await call("GET", "/runs", month.token)).status).toBe(200);
    const bare = await runCli(["token", "create", "--store", store, "--name", "oops", "--expires-in", "30"], { cwd: dir });
    expect(bare.code).not.toBe(0);
    expect(bare.stderr).toContain("unit");

    const short = await call("POST", "/tokens", root, { name: "short", scopes: ["read"], expiresIn: "1500ms" });
    expect(short.status).toBe(201);
    expect(Date.parse(short.body.record.expiresAt)).toBeGreaterThan(Date.now());
    expect((await call("GET", "/runs", short.body.token)).status).toBe(200);
    expect((await call("POST", "/tokens", root, { name: "bad", scopes: ["read"], expiresIn: "soon" })).status).toBe(400);

    let refused: Awaited<ReturnType<typeof call>> | undefined;
    await waitFor(
      async () => {
        refused = await call("GET", "/runs", short.body.token);
        return refused.status !== 200;
      },
      { timeoutMs: 10_000 },
    );
    expect(refused!.status).toBe(401);
    expect(refused!.body.error.code).toBe("TOKEN_EXPIRED");
    expect(refused!.body.error.message).toContain('"short" expired at');
    expect(refused!.text).not.toContain(short.body.token);
    // An expired token cannot get tickets either.
    expect((await call("POST", "/auth/tickets", short.body.token, {})).body.error.code).toBe("TOKEN_EXPIRED");

    const listed = (await call("GET", "/tokens", root)).body.tokens as any[];
    expect(listed.find((t) => t.name === "root").expiresAt).toBeNull();
    expect(listed.find((t) => t.name === "month").expiresAt).toBe(month.record.expiresAt);
    const text = await runCli(["token", "list", "--store", store], { cwd: dir });
    expect(text.stdout).toMatch(/short .*EXPIRED \d{4}-/);
    expect(text.stdout).toMatch(/root .*never expires/);
  });
});
