import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { tempDir, testEngine } from "../../test/support/engines.js";
import { createServer } from "./create-server.js";

function fakeBuild(): string {
  const parent = tempDir();
  const dir = join(parent, "ui");
  mkdirSync(join(dir, "assets"), { recursive: true });
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>Cairn</title>");
  writeFileSync(join(dir, "assets", "index-abc.js"), "console.log(1)");
  writeFileSync(join(dir, "assets", "index-abc.css"), "body{}");
  writeFileSync(join(parent, "secret.txt"), "nope");
  return dir;
}

describe("the dashboard route", () => {
  it("serves files with their content types, hashed assets cached for good, and index.html for any view", async () => {
    const app = createServer(await testEngine("memory"), { dashboardDir: fakeBuild() });

    const root = await app.request("/");
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/ui/");

    for (const path of [
      "/ui/",
      "/ui/runs",
      "/ui/runs/r%2F1",
      "/ui/inbox?x=1",
      "/ui/human-requests",
      "/ui/runs/release-v2.3.0",
      "/ui/runs/nightly%3A2026-11-26T03%3A00%3A00.000Z",
    ]) {
      const res = await app.request(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(await res.text()).toContain("<title>Cairn</title>");
    }
    const js = await app.request("/ui/assets/index-abc.js");
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toContain("immutable");
    expect((await app.request("/ui/assets/index-abc.css")).headers.get("content-type")).toBe("text/css; charset=utf-8");
  });

  it("compresses text files as Accept-Encoding allows: brotli first, then gzip, else as they are", async () => {
    const dir = fakeBuild();
    const script = `console.log(${JSON.stringify("cairn ".repeat(2000))});`;
    writeFileSync(join(dir, "assets", "index-big.js"), script);
    const app = createServer(await testEngine("memory"), { dashboardDir: dir });
    const br = await app.request("/ui/assets/index-big.js", { headers: { "accept-encoding": "gzip, deflate, br" } });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("vary")).toBe("accept-encoding");
    const brBody = Buffer.from(await br.arrayBuffer());
    expect(brBody.length).toBeLessThan(script.length / 10);
    expect(brotliDecompressSync(brBody).toString()).toBe(script);
    const gz = await app.request("/ui/assets/index-big.js", { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString()).toBe(script);
    const refused = await app.request("/ui/assets/index-big.js", { headers: { "accept-encoding": "br;q=0, gzip;q=0" } });
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(await refused.text()).toBe(script);
    const plain = await app.request("/ui/assets/index-big.js");
    expect(plain.headers.get("content-encoding")).toBeNull();
    // A view (index.html) too, when it is worth it; a tiny file never.
    const small = await app.request("/ui/assets/index-abc.js", { headers: { "accept-encoding": "br" } });
    expect(small.headers.get("content-encoding")).toBeNull();
  });

  it("stays public under token auth while the API beside it asks for a token", async () => {
    const app = createServer(await testEngine("memory"), { dashboardDir: fakeBuild(), auth: "tokens" });
    expect((await app.request("/ui/runs")).status).toBe(200);
    expect((await app.request("/ui/assets/index-abc.js")).status).toBe(200);
    expect((await app.request("/runs")).status).toBe(401);
    expect((await app.request("/uix")).status).toBe(401);
  });

  it("answers 404 for a missing asset and never serves a file outside its folder", async () => {
    const app = createServer(await testEngine("memory"), { dashboardDir: fakeBuild() });
    const missing = await app.request("/ui/assets/gone.js");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("ROUTE_NOT_FOUND");
    expect((await app.request("/ui/favicon.ico")).status).toBe(404);
    for (const path of ["/ui/..%2Fsecret.txt", "/ui/%2E%2E/secret.txt", "/ui/assets/..%2F..%2Fsecret.txt"]) {
      const res = await app.request(path);
      expect(await res.text(), path).not.toContain("nope");
    }
  });

  it("leaves the API alone, and is absent unless asked for", async () => {
    const engine = await testEngine("memory");
    const withUi = createServer(engine, { dashboardDir: fakeBuild() });
    expect(((await (await withUi.request("/runs")).json()) as { runs: unknown[] }).runs).toEqual([]);
    const apiOnly = createServer(engine);
    expect((await apiOnly.request("/")).status).toBe(404);
    expect((await apiOnly.request("/ui/")).status).toBe(404);
  });
});
