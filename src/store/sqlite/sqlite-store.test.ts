import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "../../core/store.js";
import { storeConformance } from "../conformance/store-conformance.js";
import { openStore } from "../open-store.js";

const dirs = new WeakMap<Store, string>();

storeConformance("sqlite", {
  async create() {
    const dir = mkdtempSync(join(tmpdir(), "cairn-sqlite-"));
    const store = await openStore(`sqlite:${join(dir, "cairn.db")}`);
    dirs.set(store, dir);
    return store;
  },
  async destroy(store) {
    await store.close();
    const dir = dirs.get(store);
    if (dir) rmSync(dir, { recursive: true, force: true });
  },
});
