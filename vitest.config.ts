import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { cairn: "./src/index.ts" } },
  test: {
    include: ["src/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 60000,
    hookTimeout: 60000,
    pool: "forks",
  },
});
