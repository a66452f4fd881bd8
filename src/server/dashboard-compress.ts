import { brotliCompressSync, constants, gzipSync } from "node:zlib";

/** Content types worth compressing (text); images and fonts are compressed already. */
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg\+xml)/;

/** Compressed bodies by file path, encoding and size+mtime: dashboard files do not change while the server runs, but a rebuild does change them. */
const cache = new Map<string, Buffer>();

/**
 * The encoding to send a dashboard file with, from the request's `Accept-Encoding`: brotli, then
 * gzip, else none (also for bodies too small to gain, or types that do not compress).
 */
export function pickEncoding(acceptEncoding: string | undefined, contentType: string, size: number): "br" | "gzip" | undefined {
  if (!acceptEncoding || size < 1024 || !COMPRESSIBLE.test(contentType)) return undefined;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.toLowerCase().split(",")) {
    const [name, ...params] = part.trim().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    accepted.set(name!.trim(), q ? Number(q.slice(2)) : 1);
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get("*") ?? 0) > 0;
  if (ok("br")) return "br";
  if (ok("gzip")) return "gzip";
  return undefined;
}

/** `body` compressed with `encoding`, computed once per file version (keyed by `key`). */
export function compressed(key: string, encoding: "br" | "gzip", body: Buffer): Buffer {
  const cacheKey = `${encoding}\0${key}`;
  let out = cache.get(cacheKey);
  if (!out) {
    out =
      encoding === "br"
        ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
        : gzipSync(body, { level: 9 });
    if (cache.size > 200) cache.clear();
    cache.set(cacheKey, out);
  }
  return out;
}
