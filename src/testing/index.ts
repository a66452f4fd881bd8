/**
 * Helpers for testing workflows: wait on conditions with deadlines, drive a fake clock,
 * and run the store conformance suite against your own Store.
 * @packageDocumentation
 */
export { waitFor, type WaitForOptions } from "./wait-for.js";
export { ManualClock } from "./manual-clock.js";
