import type { HumanRequest } from "../../core/store.js";

/** A human request as both SQL stores select it (options as JSON text, optional columns as NULL). */
export type HumanRow = Omit<HumanRequest, "options" | "status" | "context" | "closedReason"> & {
  options: string;
  status: string;
  context: string | null;
  closedReason: string | null;
};

/** Maps a human-request row selected with the store's `HUMAN_COLUMNS`. */
export function toHuman(row: HumanRow): HumanRequest {
  const { context, closedReason, ...rest } = row;
  return {
    ...rest,
    options: JSON.parse(row.options) as string[],
    status: row.status as HumanRequest["status"],
    ...(context == null ? {} : { context }),
    ...(closedReason == null ? {} : { closedReason }),
  };
}
