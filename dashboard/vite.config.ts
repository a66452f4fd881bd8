// The dashboard: a React single-page app built into dist/dashboard/ and served by `cairn serve`
// at /ui/. It imports `cairn/client` from the sources, so it speaks exactly the public HTTP API.
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const api = process.env.CAIRN_API ?? "http://127.0.0.1:4000";

export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/ui/",
  plugins: [react()],
  resolve: { alias: { "cairn/client": fileURLToPath(new URL("../src/client/index.ts", import.meta.url)) } },
  build: {
    outDir: fileURLToPath(new URL("../dist/dashboard", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
  },
  // `npx vite dashboard` for development: the API of a `cairn serve` on port 4000 (or CAIRN_API).
  server: {
    proxy: Object.fromEntries(["/runs", "/human-requests", "/workers", "/health", "/openapi.json"].map((path) => [path, { target: api, changeOrigin: true }])),
  },
});
