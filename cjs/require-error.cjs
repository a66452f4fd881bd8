// What `require("cairn")` (or any cairn/* subpath) loads from CommonJS: cairn is an ES module
// package, and this says so instead of a misleading resolution error.
"use strict";
const error = new Error(
  'cairn is ESM-only: it cannot be loaded with require(). Use `import { defineAgent } from "cairn/agent"` in an ES module ' +
    '(a .mjs or .mts file, or "type": "module" in your package.json; with TypeScript, "module": "NodeNext"), ' +
    'or from CommonJS `const { defineAgent } = await import("cairn/agent")` inside an async function.',
);
error.code = "ERR_CAIRN_ESM_ONLY";
throw error;
