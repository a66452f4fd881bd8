import { availableParallelism } from "node:os";
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
    // Most suites wait on child processes, PostgreSQL and timers rather than the CPU, so two files run
    // at once even on 2 cores (vitest's default there is one): the suite takes about 13 minutes
    // instead of 20. Crash tests are bounded by rounds, not by the clock, so a loaded machine only
    // slows them down.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // expect.poll waits on a condition with a deadline; vitest's default deadline (1 s) is shorter than
    // a browser page's first live update on a loaded machine. A test that needs another says so.
    expect: { poll: { timeout: 10_000 } },
  },
});
