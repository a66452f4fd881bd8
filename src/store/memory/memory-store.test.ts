import { storeConformance } from "../conformance/store-conformance.js";
import { MemoryStore } from "./memory-store.js";

storeConformance("memory", {
  create: async () => new MemoryStore(),
  destroy: (store) => store.close(),
});
