import { describe } from "vitest";
import { STORE_KINDS, sharedEngines } from "../../test/support/engines.js";
import { forkVersionSuite } from "../../test/support/fork-version-suite.js";

describe.each(STORE_KINDS)("fork under current code (%s)", (kind) => {
  forkVersionSuite((...sets) => sharedEngines(kind, ...sets));
});
