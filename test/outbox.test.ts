import { MemoryStore } from "../src/store/memory/memory-store.js";
import { storeUrl } from "./support/engines.js";
import { outboxEngineSuite } from "./support/outbox-suite.js";

outboxEngineSuite("memory", () => new MemoryStore());
outboxEngineSuite("sqlite", () => storeUrl("sqlite"));
