import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { onCleanup } from "./engines.js";
import { CLI_MAIN } from "./cli.js";
import { requireBuild } from "./processes.js";

/** A `cairn serve` child process (built CLI), SIGKILLed after the test if still alive. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  port: number;
  output(): string;
}

/** Spawns `cairn serve --port 0 <args>` and resolves once it says where it listens. */
export function spawnServe(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  requireBuild();
  const child = spawn(process.execPath, [CLI_MAIN, "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1", ...env },
  });
  onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGKILL");
    await exited;
  });
  let output = "";
  return new Promise((resolveServe, reject) => {
    const timer = setTimeout(() => reject(new Error(`cairn serve did not say it listens within 20 s:\n${output}`)), 20_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolveServe({ child, url: match[1]!, port: Number(match[2]), output: () => output });
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`cairn serve exited (code ${code}, signal ${signal}) before listening:\n${output}`));
    });
  });
}

/** A response read whole. `json` is the parsed body when it is JSON. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/**
 * An HTTP request with exactly these headers (a hostile `Host` included, which fetch cannot send),
 * to `127.0.0.1:<port>`.
 */
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawResponse> {
  return new Promise((resolveResponse, reject) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, headers: { ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const isJson = String(res.headers["content-type"] ?? "").includes("json");
          resolveResponse({ status: res.statusCode ?? 0, headers: res.headers, text, json: isJson && text ? JSON.parse(text) : undefined });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
