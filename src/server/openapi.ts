import { z } from "zod";
import * as api from "../core/api-schemas.js";
import { isPublicPath } from "./auth/middleware.js";
import { OPERATION_ROUTES } from "./api-routes-operations.js";
import { RUN_ROUTES, type RouteDoc } from "./api-routes.js";

const ERROR_TEXT: Record<number, string> = {
  400: "Invalid input: bad JSON, or a body, query or path that fails its schema (code INVALID_INPUT).",
  401: "With `--auth tokens`: no API token, or a malformed, unknown or revoked one, a used or stale ?ticket=, or a ?token= in the URL (UNAUTHORIZED); a token past its expiry (TOKEN_EXPIRED). For webhooks, a bad Cairn-Signature.",
  403: "The API token lacks the scope this route needs (FORBIDDEN); or a write sent by a web page of another origin (CROSS_ORIGIN_REFUSED).",
  415: "A request body not sent as `Content-Type: application/json` (UNSUPPORTED_MEDIA_TYPE).",
  421: "The Host header names a host the server does not answer for: DNS rebinding is refused (HOST_NOT_ALLOWED). Add it with `cairn serve --allowed-host`.",
  404: "Unknown run, human request or route (RUN_NOT_FOUND, HUMAN_REQUEST_NOT_FOUND, ROUTE_NOT_FOUND).",
  409: "Conflict: a different run with this id, a finished run, a run that has not failed, an answered request.",
  413: "The request body is over the server's limit (PAYLOAD_TOO_LARGE).",
  422: "Well-formed but not acceptable: unknown workflow, an answer that is not one of the options, a value that cannot be stored.",
  503: "The store is unavailable or the engine is closing (STORE_UNAVAILABLE, ENGINE_CLOSED). Retry with the same idempotency keys.",
  504: "No reply in time (TIMEOUT): the request stays delivered; ask again with the same requestId.",
};

/** Every route of `createServer`. A test checks this table against the app's routes. */
export const ROUTES: RouteDoc[] = [...RUN_ROUTES, ...OPERATION_ROUTES];

/** `/runs/:id` → `/runs/{id}` */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, "{$1}");
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

function parameters(schema: z.ZodObject | undefined, where: "path" | "query") {
  if (!schema) return [];
  const object = jsonSchema(schema, "input") as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: where, required: where === "path" || (object.required ?? []).includes(name), schema: rest, ...(description ? { description } : {}) };
  });
}

function requestBody(schema: z.ZodType) {
  const body = jsonSchema(schema, "input");
  const required = Array.isArray(body.required) && body.required.length > 0;
  return { required, content: { "application/json": { schema: body } } };
}

/** The OpenAPI 3.1 description of the API, generated from the zod schemas the server validates with. */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorSchema = jsonSchema(api.errorResponseSchema, "output");
  for (const route of ROUTES) {
    const responses: Record<string, unknown> = {};
    for (const ok of route.ok) {
      responses[String(ok.status)] = {
        description: ok.description,
        content: { [ok.contentType ?? "application/json"]: ok.schema ? { schema: jsonSchema(ok.schema, "output") } : {} },
      };
    }
    for (const status of guardStatuses(route)) {
      responses[String(status)] = { description: ERROR_TEXT[status], content: { "application/json": { schema: errorSchema } } };
    }
    const operation: Record<string, unknown> = {
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      operationId: `${route.method} ${route.path}`,
      parameters: [
        ...parameters(route.params, "path"),
        ...parameters(route.query, "query"),
        ...(route.path.endsWith("/stream")
          ? [
              {
                name: "Last-Event-ID",
                in: "header",
                required: false,
                schema: { type: "string", pattern: "^\\d+$" },
                description: "The last seq received; wins over ?after.",
              },
            ]
          : []),
      ],
      ...(route.body ? { requestBody: requestBody(route.body) } : {}),
      responses,
      security: isPublicPath(route.path) ? [] : route.method === "get" ? [{ bearer: [] }, { ticket: [] }] : [{ bearer: [] }],
    };
    (paths[openApiPath(route.path)] ??= {})[route.method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Cairn HTTP API",
      version: "0.1.0",
      description: "Start, inspect, stream and control durable runs. Errors are `{ error: { code, message } }`; codes are documented in docs/errors/<code>.md.",
    },
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "With `cairn serve --auth tokens`: an API token (`cairn token create`), or a dashboard session from POST /auth/session.",
        },
        ticket: {
          type: "apiKey",
          in: "query",
          name: "ticket",
          description: "A one-time ticket from POST /auth/tickets, for one GET request within 60 s (EventSource, links). `?token=` is refused.",
        },
      },
    },
  };
}

/**
 * A route's error statuses, with those every request may get from the guards in front of it:
 * 421 for a foreign Host (every route); 401 and 403 under token auth (every route but the public
 * ones); 403 for a cross-origin write and 415 for a body that is not JSON (writes, but webhooks,
 * which check a signature over raw bytes instead).
 */
export function guardStatuses(route: Pick<RouteDoc, "method" | "path" | "errors">): number[] {
  const statuses = new Set(route.errors);
  statuses.add(421);
  if (!isPublicPath(route.path)) {
    statuses.add(401);
    statuses.add(403);
  }
  if (route.method === "post" && !route.path.startsWith("/webhooks/")) {
    statuses.add(403);
    statuses.add(415);
  }
  return [...statuses].sort((a, b) => a - b);
}
