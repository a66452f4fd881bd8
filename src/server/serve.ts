import { serve as serveNode } from "@hono/node-server";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Engine } from "../engine/engine.js";
import { createServer } from "./create-server.js";
import { isLoopbackHost } from "./loopback.js";
import type { ServerOptions } from "./options.js";

/** Options of {@link serve}. */
export interface ServeOptions extends ServerOptions {
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port; 0 picks a free one. Default 4000. */
  port?: number;
}

/** A listening server. */
export interface RunningServer {
  /** e.g. `http://127.0.0.1:4000` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops listening, ends open streams and connections. Does not close the engine. */
  close(): Promise<void>;
}

/**
 * Serves the HTTP API of {@link createServer} on Node's HTTP server.
 * Without `auth: "tokens"` it listens only on a loopback address (the default), and refuses others.
 * @example
 * const server = await serve(engine, { port: 4000 });
 * console.log(`listening on ${server.url}`);
 * await server.close();
 */
export function serve(engine: Engine, options: ServeOptions = {}): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  if (!isLoopbackHost(host) && options.auth !== "tokens")
    return Promise.reject(
      new RangeError(
        `serve: refusing to listen on ${host} without authentication: anyone who can reach it could start, cancel and answer runs. ` +
          `Pass auth: "tokens" (and create tokens with \`cairn token create\`), or listen on a loopback address.`,
      ),
    );
  const app = createServer(engine, { ...options, allowedHosts: servedHosts(host, options.allowedHosts) });
  return listen(app.fetch, host, options.port ?? 4000, () => app.closeStreams());
}

/**
 * The hosts a server listening on `host` answers to: the configured ones plus the address itself
 * (loopback names are always in). On a wildcard address the machine's every address is a way in:
 * without configured hosts the check is off there (such a server needs token auth anyway).
 */
function servedHosts(host: string, allowed: ServeOptions["allowedHosts"]): ServeOptions["allowedHosts"] {
  if (allowed === "any") return "any";
  const wildcard = host === "0.0.0.0" || host === "::" || host === "[::]" || host === "";
  if (wildcard) return allowed === undefined || allowed.length === 0 ? "any" : allowed;
  return [...(allowed ?? []), host.includes(":") && !host.startsWith("[") ? `[${host}]` : host];
}

/** Listens with Node's HTTP server; `beforeClose` runs when {@link RunningServer.close} is called (e.g. to end streams). */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  host: string,
  port: number,
  beforeClose?: () => void,
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const server = serveNode({ fetch, hostname: host, port }) as Server;
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      const { port } = server.address() as AddressInfo;
      const urlHost = host.includes(":") ? `[${host}]` : host;
      resolve({
        url: `http://${urlHost}:${port}`,
        host,
        port,
        close: () =>
          new Promise<void>((done) => {
            beforeClose?.();
            server.close(() => done());
            server.closeIdleConnections();
            // Streams end at once; give in-flight requests a moment, then cut what is left.
            setTimeout(() => server.closeAllConnections(), 100).unref();
          }),
      });
    });
  });
}
