import { describe } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { secretsSuite } from "../../test/support/secrets-suite.js";

describe.each(["memory", "sqlite"] as const)("secrets never show through a view (%s)", (kind) => {
  secretsSuite((options) => testEngine(kind, options));
});
