import { existsSync } from "node:fs";
import { readFile, realpath, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Hono } from "hono";

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
 * Serves the single-page dashboard from `dir` under {@link DASHBOARD_PATH}: files as they are
 * (hashed assets cached for good), any other path under it gets `index.html` so a reload of
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
      return new Response(await readFile(file), {
        headers: {
          "content-type": CONTENT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream",
          "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
          "x-content-type-options": "nosniff",
        },
      });
    }
    // A missing asset is a 404; any other path is a view of the app.
    if (relative.startsWith("assets/") || extname(relative) !== "") {
      return c.json({ error: { code: "ROUTE_NOT_FOUND", message: `No dashboard file ${c.req.path}. Rebuild the dashboard with \`npm run build\`.` } }, 404);
    }
    return new Response(await readFile(join(root, "index.html")), {
      headers: { "content-type": CONTENT_TYPES[".html"]!, "cache-control": "no-cache", "x-content-type-options": "nosniff" },
    });
  });
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
