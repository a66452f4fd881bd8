import type { Context, Hono } from "hono";
import { RequestError } from "./errors.js";
import { setSecurityHeaders } from "./security-headers.js";

/**
 * What a request must look like before any route sees it, so that no web page the operator visits
 * can drive a server on `127.0.0.1` (cross-site requests, DNS rebinding):
 * - `hosts`: the names the `Host` header may carry (421 otherwise); `"any"` turns the check off.
 * - `corsOrigins`: origins (`https://ops.example.com`) whose pages may call the API; every other
 *   foreign `Origin` is refused on writes (403) and gets no CORS headers on reads.
 */
export interface RequestGuardOptions {
  hosts: ReadonlySet<string> | "any";
  corsOrigins: ReadonlySet<string>;
}

/** The host names a server on loopback answers to, whatever the port. */
export const LOOPBACK_HOST_NAMES = ["127.0.0.1", "localhost", "[::1]"] as const;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Lower-cased host name of a `Host` header or an allowed-host entry, IPv6 in brackets, without the
 * port: `Localhost:4000` → `localhost`, `[::1]:80` → `[::1]`. Undefined when it is not a host.
 */
export function hostNameOf(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[^\s:/[\]@]+)(?::(\d{1,5}))?$/.exec(v);
  return match ? match[1]!.replace(/\.$/, "") : undefined;
}

/** Normalizes a configured origin (`https://Ops.example.com/` → `https://ops.example.com`), or throws a RangeError naming it. */
export function normalizeOrigin(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new RangeError(`Not an origin: ${JSON.stringify(origin)}. Give scheme, host and optional port, such as https://ops.example.com.`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.pathname !== "/" || url.search || url.hash || url.username)
    throw new RangeError(`Not an origin: ${JSON.stringify(origin)}. Give scheme, host and optional port only, such as https://ops.example.com.`);
  return url.origin;
}

function isJson(contentType: string): boolean {
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/json";
}

function hasBody(c: Context): boolean {
  const length = c.req.header("content-length");
  if (length !== undefined) return length.trim() !== "0";
  return c.req.header("transfer-encoding") !== undefined;
}

/** Webhooks are server-to-server and check their own signature over whatever bytes were sent. */
function isWebhook(path: string): boolean {
  return path.startsWith("/webhooks/");
}

/**
 * Registers the guard (before auth and routes): `Host` allow-list, `Origin` check on writes,
 * `Content-Type: application/json` on bodies, and CORS for the configured origins only.
 */
export function registerRequestGuard(app: Hono, options: RequestGuardOptions): void {
  app.use("*", async (c, next) => {
    // A request built in code (app.request) has no Host header: its URL stands for it.
    const host = c.req.header("host") ?? new URL(c.req.url).host;
    if (options.hosts !== "any") {
      const name = hostNameOf(host);
      if (name === undefined || !options.hosts.has(name))
        throw new RequestError(
          "HOST_NOT_ALLOWED",
          `This server does not answer to the host ${JSON.stringify(host)}: it accepts ${[...options.hosts].join(", ")}. ` +
            "A proxy or a DNS name in front of it must be allowed with `cairn serve --allowed-host <name>` (serve option allowedHosts).",
          421,
        );
    }
    const origin = c.req.header("origin");
    const sameOrigin = origin !== undefined && originHost(origin) === host.trim().toLowerCase();
    const allowedOrigin = origin !== undefined && options.corsOrigins.has(origin.toLowerCase());
    const write = !SAFE_METHODS.has(c.req.method);
    if (c.req.method === "OPTIONS" && allowedOrigin) return preflight(c, origin);
    if (write && !isWebhook(c.req.path)) {
      const crossSite = c.req.header("sec-fetch-site") === "cross-site";
      if ((origin !== undefined && !sameOrigin && !allowedOrigin) || (crossSite && !allowedOrigin))
        throw new RequestError(
          "CROSS_ORIGIN_REFUSED",
          `Refused a ${c.req.method} from the web origin ${JSON.stringify(origin ?? "(cross-site)")}: a page on another site may not act on this server. ` +
            "To let a web app you run call the API, add its origin with `cairn serve --cors-origin <origin>` (serve option corsOrigins).",
          403,
        );
      const type = c.req.header("content-type");
      if ((type !== undefined && !isJson(type)) || (type === undefined && hasBody(c)))
        throw new RequestError(
          "UNSUPPORTED_MEDIA_TYPE",
          `Request bodies must be JSON sent with Content-Type: application/json (got ${type === undefined ? "no Content-Type" : JSON.stringify(type)}).`,
          415,
        );
    }
    await next();
    setSecurityHeaders(c.res.headers, c.req.path);
    if (allowedOrigin) {
      c.res.headers.set("access-control-allow-origin", origin);
      c.res.headers.append("vary", "Origin");
    }
  });
}

/** `Origin: http://127.0.0.1:4000` → `127.0.0.1:4000` (the form of a `Host` header); undefined for `null` and the like. */
function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === "http:" || url.protocol === "https:" ? url.host.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

function preflight(c: Context, origin: string): Response {
  return c.body(null, 204, {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": "GET, POST",
    "access-control-allow-headers": "authorization, content-type, last-event-id",
    "access-control-max-age": "600",
    vary: "Origin",
  });
}
