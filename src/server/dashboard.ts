import { existsSync } from "node:fs";
import { readFile, realpath, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Hono } from "hono";
import { compressed, pickEncoding } from "./dashboard-compress.js";

/** Where the dashboard is served: the API keeps every other path. */
export const DASHBOARD_PATH = "/ui";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * The built dashboard (`vite build` output) shipped with the package, or undefined when it was not
 * built. Compiled code lives in `dist/src/server/`, the dashboard in `dist/dashboard/`; run from the
 * sources (tests), the same build is looked for in `dist/dashboard/` of the checkout.
 */
export function builtDashboardDir(): string | undefined {
  const fromSources = import.meta.url.endsWith(".ts");
  const dir = fileURLToPath(new URL(fromSources ? "../../dist/dashboard/" : "../../dashboard/", import.meta.url));
  return existsSync(join(dir, "index.html")) ? dir : undefined;
}

/**
 * Serves the single-page dashboard from `dir` under {@link DASHBOARD_PATH}: files brotli- or
 * gzip-compressed as the client's Accept-Encoding allows (hashed assets cached for good), any other path under it gets `index.html` so a reload of
 * `/ui/runs/r-1` keeps the view. `GET /` redirects to the dashboard.
 */
export function registerDashboardRoutes(app: Hono, dir: string): void {
  const root = resolve(dir);
  // Symlinks are followed only while they stay inside the folder: a link to the store file (or
  // anything else on the machine) would otherwise be served to anyone, even under token auth.
  const realRoot = realpath(root).catch(() => root);
  app.get("/", (c) => c.redirect(`${DASHBOARD_PATH}/`, 302));
  app.get(DASHBOARD_PATH, (c) => c.redirect(`${DASHBOARD_PATH}/`, 301));
  app.get(`${DASHBOARD_PATH}/*`, async (c) => {
    let relative: string;
    try {
      relative = decodeURIComponent(c.req.path.slice(DASHBOARD_PATH.length + 1));
    } catch {
      relative = "";
    }
    const file = resolve(root, relative);
    const inside = file === root || file.startsWith(root + sep);
    if (inside && relative !== "" && (await isFile(file)) && isWithin(await realRoot, await realpath(file))) {
      const immutable = relative.startsWith("assets/");
      const contentType = CONTENT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream";
      return fileResponse(file, contentType, immutable ? "public, max-age=31536000, immutable" : "no-cache", c.req.header("accept-encoding"));
    }
    // A missing asset is a 404; any other path is a view of the app, even one with a dot in it
    // (a run id such as `release-v2.3.0` or a scheduled run's `….000Z`).
    if (isAssetPath(relative)) {
      const hint = inside
        ? " A page open since an earlier build asks for its old files: reload it. If the dashboard itself does not load, build it with `npm run build`."
        : "";
      return c.json({ error: { code: "ROUTE_NOT_FOUND", message: `No dashboard file ${c.req.path}.${hint}` } }, 404);
    }
    return fileResponse(join(root, "index.html"), CONTENT_TYPES[".html"]!, "no-cache", c.req.header("accept-encoding"));
  });
}

/** Whether a missing `relative` path names a file of the build (hashed assets, or a top-level file such as `favicon.ico`), not a client route. */
function isAssetPath(relative: string): boolean {
  return relative.startsWith("assets/") || (!relative.includes("/") && extname(relative) !== "");
}

/** A dashboard file, brotli- or gzip-compressed when the client accepts it (compressed once per file version). */
async function fileResponse(file: string, contentType: string, cacheControl: string, acceptEncoding: string | undefined): Promise<Response> {
  const [body, info] = await Promise.all([readFile(file), stat(file)]);
  const headers: Record<string, string> = {
    "content-type": contentType,
    "cache-control": cacheControl,
    "x-content-type-options": "nosniff",
    vary: "accept-encoding",
  };
  const encoding = pickEncoding(acceptEncoding, contentType, body.length);
  if (!encoding) return new Response(body, { headers });
  return new Response(compressed(`${file}\0${info.size}\0${info.mtimeMs}`, encoding, body), { headers: { ...headers, "content-encoding": encoding } });
}

function isWithin(root: string, path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
