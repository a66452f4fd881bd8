// Through the public export, as a third-party store would run it.
import { storeConformance } from "cairn/testing";
import { MemoryStore } from "./memory-store.js";

storeConformance("memory", {
  create: async () => new MemoryStore(),
  destroy: (store) => store.close(),
});
