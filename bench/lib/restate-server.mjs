// A Restate server for the Restate peer cases (bench/cases/peers.mjs, bench/cases/resume.mjs): the
// native binary that @restatedev/restate-server-<platform>-<arch> ships inside its npm tarball
// (nothing is downloaded), started as a child process on 127.0.0.1 only, with its data in a fresh
// temp dir, and stopped (then the dir removed) by stop().
//
// Configuration (a TOML file in that dir; everything else is the server's default, which is also
// its --production profile but for auto-provision): a single node with all roles; its ingress,
// admin and node-to-node (fabric) ports bound to 127.0.0.1 on free ports, TCP only (no Unix
// sockets); telemetry off; the admin web UI off. Durability is the default and is read back with
// --dump-config (see durability()): the log (Bifrost's replicated loglet, replication 1, on this
// node's log-server) keeps its RocksDB write-ahead log with fsync on (log-server
// rocksdb-disable-wal-fsync = false), so a journal entry is acknowledged once fsynced.
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { join } from "node:path";

const requireFromBench = createRequire(new URL("../package.json", import.meta.url));
const START_TIMEOUT_MS = 60_000;

/** The restate-server binary installed in bench/node_modules for this platform, or null. */
export function restateBinary() {
  try {
    return requireFromBench.resolve(`@restatedev/restate-server-${platform()}-${arch()}/bin/restate-server`);
  } catch {
    return null;
  }
}

/** A free TCP port on 127.0.0.1 (the OS picks it; closed again at once). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server and waits until its admin API and ingress answer. Returns { ingressUrl, adminUrl,
 * version, durability, register(uri), stop() }. `onProgress` gets a line of text while it starts.
 */
export async function startRestateServer({ onProgress } = {}) {
  const binary = restateBinary();
  if (!binary) throw new Error(`no restate-server binary for ${platform()}-${arch()} in bench/node_modules (run npm --prefix bench ci)`);
  const dir = mkdtempSync(join(tmpdir(), "cairn-bench-restate-"));
  const [ingress, admin, fabric] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, "restate.toml");
  writeFileSync(
    config,
    [
      `node-name = "bench"`,
      `base-dir = ${JSON.stringify(join(dir, "data"))}`,
      `listen-mode = "tcp"`,
      `bind-ip = "127.0.0.1"`,
      `bind-address = "127.0.0.1:${fabric}"`,
      `advertised-address = "http://127.0.0.1:${fabric}/"`,
      `disable-telemetry = true`,
      `log-filter = "warn"`,
      `log-format = "compact"`,
      `log-disable-ansi-codes = true`,
      ``,
      `[ingress]`,
      `bind-address = "127.0.0.1:${ingress}"`,
      ``,
      `[admin]`,
      `bind-address = "127.0.0.1:${admin}"`,
      `disable-web-ui = true`,
      ``,
    ].join("\n"),
  );
  const durability = durabilityOf(binary, config);
  const version = spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout.trim();
  const child = spawn(binary, ["--config-file", config, "--no-logo"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, RESTATE_CONFIG: "" } });
  let output = "";
  const keep = (chunk) => {
    output = (output + chunk).slice(-8192);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  // A bench process that ends without calling stop() (an uncaught error, run.mjs's SIGINT handler)
  // still takes its server down and removes its data.
  const killOnExit = () => {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", killOnExit);
  const ingressUrl = `http://127.0.0.1:${ingress}`;
  const adminUrl = `http://127.0.0.1:${admin}`;
  const failure = (what) => new Error(`restate-server (pid ${child.pid}) ${what}; its output ended with:\n${output.trim().split("\n").slice(-12).join("\n")}`);

  async function stop() {
    process.off("exit", killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  }

  try {
    onProgress?.(`starting ${version} on 127.0.0.1 (ingress ${ingress}, admin ${admin})`);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw failure(`exited (${child.signalCode ?? child.exitCode}) while starting`);
      if ((await ok(`${adminUrl}/health`)) && (await ok(`${ingressUrl}/restate/health`))) break;
      if (Date.now() > deadline) throw failure(`did not answer on ${adminUrl}/health and ${ingressUrl}/restate/health within ${START_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }

  /** Registers the SDK endpoint at `uri` (POST /deployments), replacing an earlier registration of it. */
  async function register(uri) {
    const response = await fetch(`${adminUrl}/deployments`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ uri, force: true }) });
    if (!response.ok) throw failure(`refused the deployment ${uri}: ${response.status} ${await response.text()}`);
    return response.json();
  }

  return { ingressUrl, adminUrl, version, durability, pid: child.pid, register, stop, output: () => output };
}

async function ok(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * The settings that decide what an acknowledged journal entry survives, as the server resolves them
 * from `config` (restate-server --dump-config): where the log lives and whether its WAL is fsynced.
 */
function durabilityOf(binary, config) {
  const out = spawnSync(binary, ["--config-file", config, "--dump-config"], { encoding: "utf8", env: { ...process.env, RESTATE_CONFIG: "" } });
  if (out.status !== 0) throw new Error(`restate-server --dump-config failed (${out.status}): ${out.stderr}`);
  const sections = {};
  let section = "";
  for (const line of out.stdout.split("\n")) {
    const header = /^\[([^\]]+)\]$/.exec(line.trim());
    if (header) section = header[1];
    const kv = /^([a-z0-9-]+) = (.+)$/.exec(line.trim());
    if (kv) (sections[section] ??= {})[kv[1]] = kv[2].replace(/^"|"$/g, "");
  }
  const get = (s, k) => sections[s]?.[k] ?? null;
  return {
    logProvider: get("bifrost", "default-provider"),
    replication: get("", "default-replication"),
    logServerWalFsync: get("log-server", "rocksdb-disable-wal-fsync") === "false",
    logServerWalDisabled: get("log-server", "rocksdb-disable-wal") === "true",
    metadataServer: get("metadata-client", "type"),
    partitions: Number(get("", "default-num-partitions")),
    retryInitialInterval: get("default-retry-policy", "initial-interval"),
  };
}
