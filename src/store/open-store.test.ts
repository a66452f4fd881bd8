import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryStore } from "./memory/memory-store.js";
import { defaultStoreUrl, openStore } from "./open-store.js";
import { SqliteStore } from "./sqlite/sqlite-store.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cairn-url-"));
});
afterEach(() => {
  vi.unstubAllEnvs();
  rmSync(dir, { recursive: true, force: true });
});

describe("openStore", () => {
  it("opens memory: as a MemoryStore", async () => {
    const store = await openStore("memory:");
    expect(store).toBeInstanceOf(MemoryStore);
    expect(store.url).toBe("memory:");
  });

  it("opens sqlite::memory: as a migrated in-memory SQLite store", async () => {
    const store = await openStore("sqlite::memory:");
    expect(store).toBeInstanceOf(SqliteStore);
    expect(store.url).toBe("sqlite::memory:");
    expect((await store.createRun({ runId: "r", workflow: "w", version: "1", input: "1" }, 1)).created).toBe(true);
    await store.close();
  });

  it("resolves a relative sqlite path against cwd and migrates it", async () => {
    const store = await openStore("sqlite:data/cairn.db", { cwd: dir });
    expect(store.url).toBe(`sqlite:${join(dir, "data", "cairn.db")}`);
    expect(existsSync(join(dir, "data", "cairn.db"))).toBe(true);
    expect(await store.listRuns({})).toEqual({ runs: [] });
    await store.close();
  });

  it("keeps an absolute sqlite path", async () => {
    const path = join(dir, "abs.db");
    const store = await openStore(`sqlite:${path}`, { cwd: "/nonexistent" });
    expect(store.url).toBe(`sqlite:${path}`);
    await store.close();
  });

  it.each(["postgres://127.0.0.1:1/cairn", "postgresql://127.0.0.1:1/cairn"])(
    "routes %j to the PostgreSQL store, which fails to connect without crashing",
    async (url) => {
      await expect(openStore(url, { connectTimeoutMs: 2000 })).rejects.toMatchObject({ code: "ECONNREFUSED" });
      await expect(openStore(`${url}?schema=no-dashes`)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    },
  );

  it.each(["postgres:localhost/cairn", "mysql://localhost/cairn", "sqlite:", "sqlite:   ", "sqlite://host/x.db", "memory", "cairn.db", ""])(
    "rejects %j with StoreUrlError",
    async (url) => {
      await expect(openStore(url)).rejects.toMatchObject({ code: "STORE_URL", message: expect.stringContaining("sqlite:<path>") as string });
    },
  );
});

describe("defaultStoreUrl", () => {
  it("is $CAIRN_STORE when set", () => {
    vi.stubEnv("CAIRN_STORE", "memory:");
    expect(defaultStoreUrl()).toBe("memory:");
  });

  it("is sqlite:.cairn/cairn.db otherwise", () => {
    vi.stubEnv("CAIRN_STORE", "");
    expect(defaultStoreUrl()).toBe("sqlite:.cairn/cairn.db");
  });
});
