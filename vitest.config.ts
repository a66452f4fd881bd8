import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (path: string): string => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  // The examples import the package by name, as users do; tests run them on the sources.
  resolve: {
    alias: [
      { find: /^cairn$/, replacement: src("index.ts") },
      { find: /^cairn\/agent$/, replacement: src("agent/index.ts") },
      { find: /^cairn\/testing$/, replacement: src("testing/index.ts") },
      { find: /^cairn\/server$/, replacement: src("server/index.ts") },
      { find: /^cairn\/client$/, replacement: src("client/index.ts") },
    ],
  },
  test: {
    include: ["src/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60000,
    hookTimeout: 60000,
    pool: "forks",
  },
});
