import { describe, expect, it } from "vitest";
import { isPostgresUrl, resolvePostgresConfig, wakeChannel } from "./postgres-config.js";
import { checkDurability } from "./postgres-open.js";

describe("resolvePostgresConfig", () => {
  it("defaults to the cairn schema, the database clock and strict durability", () => {
    const config = resolvePostgresConfig("postgres://cairn@db.internal:5432/app");
    expect(config).toEqual({
      connectionString: "postgres://cairn@db.internal:5432/app",
      serverOptions: '-c search_path="cairn"',
      displayUrl: "postgres://cairn@db.internal:5432/app?schema=cairn",
      schema: "cairn",
      allowWeakDurability: false,
      clock: "database",
      poolSize: 10,
      connectTimeoutMs: 10_000,
    });
  });

  it("takes Cairn's parameters out of the URL and keeps the rest for pg", () => {
    const config = resolvePostgresConfig(
      "postgresql://u:s3cret@h/db?sslmode=require&schema=Tenant_1&allowWeakDurability=1&clock=caller&options=-c%20statement_timeout%3D5000",
    );
    expect(config.connectionString).toBe("postgresql://u:s3cret@h/db?sslmode=require");
    expect(config.serverOptions).toBe('-c statement_timeout=5000 -c search_path="Tenant_1"');
    expect(config).toMatchObject({ schema: "Tenant_1", allowWeakDurability: true, clock: "caller" });
    expect(config.displayUrl).toBe("postgresql://u@h/db?sslmode=require&schema=Tenant_1");
  });

  it("lets the URL win over options, and uses options when the URL is silent", () => {
    expect(resolvePostgresConfig("postgres://h/db?schema=a", { schema: "b" }).schema).toBe("a");
    expect(resolvePostgresConfig("postgres://h/db", { schema: "b", clock: "caller", allowWeakDurability: true, poolSize: 3 })).toMatchObject({
      schema: "b",
      clock: "caller",
      allowWeakDurability: true,
      poolSize: 3,
    });
    expect(resolvePostgresConfig("postgres://h/db?allowWeakDurability=0", { allowWeakDurability: true }).allowWeakDurability).toBe(false);
    // ?poolSize= bounds a worker process's connections from its store URL (cairn worker, CAIRN_STORE); it is not passed to pg.
    const pooled = resolvePostgresConfig("postgres://h/db?poolSize=4&sslmode=require", { poolSize: 20 });
    expect(pooled.poolSize).toBe(4);
    expect(pooled.connectionString).toBe("postgres://h/db?sslmode=require");
  });

  it("never shows a password", () => {
    expect(resolvePostgresConfig("postgres://u:pw@h/db?password=pw2").displayUrl).toBe("postgres://u@h/db?schema=cairn");
  });

  it.each(["bad-name", "1abc", 'x"; DROP', "a".repeat(64), ""])("rejects the schema name %j", (schema) => {
    expect(() => resolvePostgresConfig(`postgres://h/db?schema=${encodeURIComponent(schema)}`)).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }) as Error,
    );
  });

  it("rejects an unknown clock and bad pool settings", () => {
    expect(() => resolvePostgresConfig("postgres://h/db?clock=wall")).toThrow(/clock/);
    expect(() => resolvePostgresConfig("postgres://h/db", { poolSize: 0 })).toThrow(/poolSize/);
    for (const bad of ["0", "-1", "2.5", "ten", "", "10000"]) {
      expect(() => resolvePostgresConfig(`postgres://h/db?poolSize=${bad}`)).toThrow(/poolSize .*1 to 9999/);
    }
  });

  it("recognises postgres:// and postgresql:// URLs only", () => {
    expect(isPostgresUrl("postgres://h/db")).toBe(true);
    expect(isPostgresUrl("postgresql://h/db")).toBe(true);
    expect(isPostgresUrl("postgres:h/db")).toBe(false);
    expect(isPostgresUrl("sqlite:x.db")).toBe(false);
    expect(() => resolvePostgresConfig("sqlite:x.db")).toThrow(expect.objectContaining({ code: "STORE_URL" }) as Error);
  });
});

describe("wakeChannel", () => {
  it("is a quoted identifier per schema, shortened with a hash past 63 bytes", () => {
    expect(wakeChannel("cairn")).toBe('"cairn_wake_cairn"');
    const long = wakeChannel("s".repeat(63));
    expect(long.length - 2).toBeLessThanOrEqual(63);
    expect(long).not.toBe(wakeChannel(`${"s".repeat(62)}t`));
  });
});

describe("checkDurability", () => {
  const strict = { fsync: "on", synchronousCommit: "on" };

  it("accepts a durable server, including synchronous_commit=local or remote_apply", () => {
    expect(() => checkDurability(strict, "postgres://h/db", false)).not.toThrow();
    for (const synchronousCommit of ["local", "remote_write", "remote_apply"])
      expect(() => checkDurability({ ...strict, synchronousCommit }, "x", false)).not.toThrow();
  });

  it("refuses fsync=off, saying why and how to allow it", () => {
    const error = (() => {
      try {
        checkDurability({ ...strict, fsync: "off" }, "postgres://h/db?schema=cairn", false);
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error).toMatchObject({ code: "STORE_INVALID", name: "StoreInvalidError" });
    expect(error?.message).toContain("postgres://h/db?schema=cairn");
    expect(error?.message).toContain("fsync=off");
    expect(error?.message).toMatch(/lose or corrupt committed data/);
    expect(error?.message).toContain("allowWeakDurability: true");
    expect(error?.message).toContain("?allowWeakDurability=1");
  });

  it("refuses synchronous_commit=off, and names both settings when both are off", () => {
    expect(() => checkDurability({ ...strict, synchronousCommit: "OFF" }, "x", false)).toThrow(/synchronous_commit=off/);
    expect(() => checkDurability({ fsync: "off", synchronousCommit: "off" }, "x", false)).toThrow(/fsync=off .* and synchronous_commit=off/);
  });

  it("allows weak durability when asked to", () => {
    expect(() => checkDurability({ fsync: "off", synchronousCommit: "off" }, "x", true)).not.toThrow();
  });
});
