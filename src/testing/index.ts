/**
 * Helpers for testing workflows: wait on conditions with deadlines, drive a fake clock,
 * and run the store conformance suite against your own Store (`storeConformance`, which
 * registers vitest suites: vitest must be installed to import this module).
 * @packageDocumentation
 */
export { waitFor, type WaitForOptions } from "./wait-for.js";
export { ManualClock } from "./manual-clock.js";
export { storeConformance, type StoreFactory } from "../store/conformance/store-conformance.js";
