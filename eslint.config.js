// Lint: type-aware rules (floating promises) and the layer direction of DESIGN.md §5:
// core < store < engine < (agent) < server / cli. A lower layer never imports a higher one.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const layer = (files, forbidden, message) => ({
  files,
  rules: {
    "no-restricted-imports": ["error", { patterns: forbidden.map((group) => ({ group: [group].flat(), message })) }],
  },
});

export default tseslint.config(
  { ignores: ["dist/**", "**/node_modules/**", "**/*.mjs", "**/*.cjs", "bench/out/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: false }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-constant-condition": ["error", { checkLoops: false }],
      "@typescript-eslint/no-this-alias": "off",
    },
  },
  { files: ["**/*.js"], ...tseslint.configs.disableTypeChecked },
  layer(
    ["src/core/**"],
    [
      // core/store/ holds the Store port's entity interfaces (core/store.ts composes them): core, not the store layer.
      ["**/store/**", "!./store/*"],
      "**/engine/**",
      "**/agent/**",
      "**/server/**",
      "**/cli/**",
      "node:fs",
      "node:fs/*",
      "node:net",
      "node:child_process",
      "better-sqlite3",
      "pg",
    ],
    "core is pure: no I/O and no imports from higher layers.",
  ),
  layer(["src/store/**"], ["**/engine/**", "**/agent/**", "**/server/**", "**/cli/**"], "store may import only core."),
  layer(
    ["src/engine/**"],
    ["**/agent/**", "**/server/**", "**/cli/**", "better-sqlite3", "pg", "**/store/sqlite/**", "**/store/memory/**"],
    "engine reaches stores only through the Store port and openStore.",
  ),
  {
    // Workflow code is replayed: time and randomness must come from ctx (STYLE.md §7). That is the
    // examples' workflows and the agent layer's files, whose code runs inside the agent's workflow
    // (model adapters and MCP clients run inside steps, which are not replayed: src/agent/model/ is not listed).
    files: ["examples/**/*.ts", "src/agent/*.ts"],
    ignores: ["examples/**/*.test.ts", "examples/demo.ts", "examples/test-helpers.ts", "src/agent/*.test.ts"],
    rules: {
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "Workflow code is replayed: use ctx.now()." },
        { object: "Math", property: "random", message: "Workflow code is replayed: use ctx.random()." },
      ],
      "no-restricted-syntax": [
        "error",
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: "Workflow code is replayed: use ctx.now()." },
      ],
    },
  },
  layer(
    ["src/agent/**"],
    ["**/server/**", "**/cli/**", "better-sqlite3", "pg", "**/store/sqlite/**", "**/store/postgres/**", "**/store/memory/**"],
    "agent sits above the engine: it reaches stores only through the Store port, never the front doors.",
  ),
  layer(["src/testing/**"], ["**/cli/**", "**/server/**", "**/client/**"], "testing helpers sit below the front doors."),
  layer(["src/server/**"], ["**/cli/**", "better-sqlite3", "pg"], "the server reaches stores only through the engine; the CLI composes it."),
  {
    // Server tests may drive the server with the client's SSE parser; the server itself never imports the client.
    ...layer(["src/server/**"], ["**/cli/**", "**/client/**", "better-sqlite3", "pg"], "the server never imports the CLI, the client or a store driver."),
    ignores: ["src/server/**/*.test.ts"],
  },
  {
    // The client runs wherever fetch does (a browser, the dashboard): no server code, no Node built-ins.
    files: ["src/client/**"],
    ignores: ["src/client/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/server/**", "**/engine/**", "**/store/**", "**/agent/**", "**/cli/**"],
              message: "cairn/client talks to the server only over HTTP.",
              allowTypeImports: false,
            },
            {
              group: ["node:*", "zod", "hono", "hono/*", "@hono/*"],
              message: "cairn/client must run in a browser too: no Node built-ins or server libraries at run time.",
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // The dashboard is a browser app on the public HTTP API: it reaches the server only through cairn/client.
    files: ["dashboard/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["**/src/**", "!./**"], message: "The dashboard uses only the public API: import from cairn/client." },
            { group: ["node:*", "hono", "hono/*", "zod"], message: "The dashboard runs in a browser." },
          ],
        },
      ],
    },
  },
  { files: ["dashboard/vite.config.ts"], rules: { "no-restricted-imports": "off" } },
);
