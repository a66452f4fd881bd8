import { describe } from "vitest";
import { chaosSchema } from "../../test/chaos/support/pg.js";
import { onCleanup } from "../../test/support/engines.js";
import { secretsSuite } from "../../test/support/secrets-suite.js";
import { createEngine } from "../engine/create-engine.js";
import { silentLogger } from "../engine/logger.js";

describe("secrets never show through a view (postgres)", () => {
  secretsSuite(async (options) => {
    const schema = await chaosSchema();
    const engine = await createEngine({ store: schema.url("cairn_secrets"), logger: silentLogger, ...options });
    onCleanup(() => engine.close());
    return engine;
  });
});
