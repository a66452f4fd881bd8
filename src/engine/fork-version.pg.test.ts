import { describe } from "vitest";
import { chaosSchema } from "../../test/chaos/support/pg.js";
import { onCleanup } from "../../test/support/engines.js";
import { forkVersionSuite } from "../../test/support/fork-version-suite.js";
import { createEngine } from "./create-engine.js";
import type { Engine } from "./engine.js";
import { silentLogger } from "./logger.js";

describe("fork under current code (postgres)", () => {
  forkVersionSuite(async (...sets) => {
    const schema = await chaosSchema();
    const engines: Engine[] = [];
    for (const workflows of sets) engines.push(await createEngine({ store: schema.url("cairn_fork"), workflows, logger: silentLogger }));
    onCleanup(async () => {
      for (const engine of engines.reverse()) await engine.close();
    });
    return engines;
  });
});
