import { z } from "zod";
import { apiScheduleSchema } from "./api-schemas.js";
import { printable } from "./schemas.js";

/**
 * The wire format of the operator's write routes beside their CLI twins: pausing and resuming a
 * schedule (`cairn schedules pause|resume`), retiring and reinstating a workflow version
 * (`cairn retire|reinstate`). `cairn/server` validates with these schemas and documents them in
 * its OpenAPI description.
 */

/** Path parameter of `POST /schedules/:name/pause` and `POST /schedules/:name/resume`: a schedule name, as `defineSchedule` takes it. */
export const scheduleNameParam = z
  .object({
    name: z
      .string()
      .min(1, "must not be empty")
      .max(100, "must be at most 100 characters")
      .regex(/^[A-Za-z0-9._-]+$/, "may contain only letters, digits, '.', '_' and '-' (list names with GET /schedules)"),
  })
  .strict();

/** Body of `POST /schedules/:name/pause` and `resume`: none, or an empty object. */
export const scheduleActionBody = z.object({}).strict();

/** What `POST /schedules/:name/pause` and `POST /schedules/:name/resume` answer: the schedule after the change. */
export const scheduleActionResponse = z.object({
  schedule: apiScheduleSchema,
  changed: z.boolean().describe("False when the schedule already was in that state (nothing was written or audited)."),
});

/** Body of `POST /versions/retire` and `POST /versions/reinstate`: a workflow version, as `GET /versions` lists it. */
export const versionActionBody = z
  .object({
    workflow: printable(z.string().min(1, "must not be empty").max(200, "must be at most 200 characters")).describe("The workflow name."),
    version: printable(z.string().min(1, "must not be empty").max(200, "must be at most 200 characters")).describe('Its version, e.g. "1".'),
  })
  .strict();

/** What `POST /versions/retire` and `POST /versions/reinstate` answer. */
export const versionActionResponse = z.object({
  workflow: z.string(),
  version: z.string(),
  retired: z.boolean().describe("Whether the version is retired now (no worker claims its runs)."),
  changed: z.boolean().describe("False when it already was (nothing was written or audited)."),
  known: z.boolean().describe("Whether the store has runs of this version; retiring an unknown one is recorded anyway (it may be deployed later)."),
});

/** `POST /versions/retire` / `reinstate` body, as the client sends it. */
export type VersionActionBody = z.input<typeof versionActionBody>;
/** `POST /schedules/:name/pause` / `resume` as the client receives it. */
export type ScheduleActionResult = z.output<typeof scheduleActionResponse>;
/** `POST /versions/retire` / `reinstate` as the client receives it. */
export type VersionActionResult = z.output<typeof versionActionResponse>;
