import { CairnClient } from "cairn/client";
import { useSyncExternalStore } from "react";

const KEY = "cairn.token";

/**
 * The credential of this tab, when the server runs with `--auth tokens`: a token pasted into the
 * token panel, or a dashboard session opened from a one-time link `/ui/?ticket=cairn_ticket_…`
 * (`POST /auth/tickets` makes the ticket; `POST /auth/session` trades it). Kept in this tab's
 * session storage, never in the URL. A `?token=` in the URL is dropped unused: a token in a URL
 * ends up in proxy logs and browser history, so links carry tickets only.
 */
async function takeTicketFromUrl(): Promise<void> {
  const url = new URL(window.location.href);
  const ticket = url.searchParams.get("ticket");
  const hadToken = url.searchParams.has("token");
  if (ticket === null && !hadToken) return;
  url.searchParams.delete("ticket");
  url.searchParams.delete("token");
  window.history.replaceState(null, "", url.toString());
  if (ticket === null) return;
  const response = await fetch(`${window.location.origin}/auth/session`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ ticket }),
  });
  if (response.ok) {
    const session = (await response.json()) as { token: string };
    window.sessionStorage.setItem(KEY, session.token);
    update({ token: session.token, problem: undefined, epoch: state.epoch + 1 });
  } else update({ problem: { status: 401, message: await messageOf(response) } });
}

export function currentToken(): string | null {
  return window.sessionStorage.getItem(KEY);
}

/**
 * Why the API turned this tab away: no or a refused token (401), or a token without a scope a
 * read needs (403). A 403 on a write is the action's own error, shown where it was tried.
 */
export interface AuthProblem {
  status: 401 | 403;
  message: string;
}

interface AuthState {
  /** Bumped when the token changes: pages remount and load again with it. */
  epoch: number;
  token: string | null;
  problem: AuthProblem | undefined;
}

let state: AuthState = { epoch: 0, token: currentToken(), problem: undefined };
const listeners = new Set<() => void>();

function update(next: Partial<AuthState>): void {
  state = { ...state, ...next };
  for (const listener of listeners) listener();
}

/** Settles once a ticket in the URL (if any) was traded for a session: calls wait for it. */
const ready = takeTicketFromUrl().catch(() => undefined);

/** The tab's auth state, re-rendered when it changes. */
export function useAuth(): AuthState {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => state,
  );
}

/** Uses this token from now on (after {@link checkToken} accepted it). */
export function saveToken(token: string): void {
  window.sessionStorage.setItem(KEY, token);
  update({ token, problem: undefined, epoch: state.epoch + 1 });
}

/** Drops the tab's token. */
export function forgetToken(): void {
  window.sessionStorage.removeItem(KEY);
  update({ token: null, problem: undefined, epoch: state.epoch + 1 });
}

async function messageOf(response: Response): Promise<string> {
  try {
    const body = (await response.clone().json()) as { error?: { message?: unknown } };
    if (typeof body.error?.message === "string") return body.error.message;
  } catch {
    // not JSON: the status says enough
  }
  return `HTTP ${response.status}`;
}

function withToken(init: RequestInit | undefined, token: string | null): RequestInit {
  const headers = new Headers(init?.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return { ...init, headers };
}

/**
 * Every call carries the tab's current token; a 401, or (with `readsNeedScope`) a 403 on a read, is
 * reported to {@link useAuth}.
 */
function tokenFetch(readsNeedScope: boolean): typeof fetch {
  return async (input, init) => {
    await ready;
    const token = currentToken();
    const response = await fetch(input, withToken(init, token));
    const method = (init?.method ?? "GET").toUpperCase();
    // A call sent with a token since replaced says nothing about the new one.
    if ((response.status === 401 || (readsNeedScope && response.status === 403 && method === "GET")) && token === currentToken()) {
      const message = await messageOf(response);
      if (state.problem?.status !== response.status || state.problem.message !== message) update({ problem: { status: response.status, message } });
    }
    return response;
  };
}

const authFetch = tokenFetch(true);

/** The API of the server that serves the dashboard: same origin, with the tab's token if any. */
export const api = new CairnClient({ baseUrl: window.location.origin, fetch: authFetch });

/**
 * The same API for the operator's pages (schedules, queues, outbox, versions, audit log, tokens):
 * a 403 there (a token without the admin scope, or a namespaced one) is that page's own message,
 * not a reason to turn the whole tab away.
 */
export const consoleApi = new CairnClient({ baseUrl: window.location.origin, fetch: tokenFetch(false) });

/**
 * Tries a token before keeping it: a read the dashboard needs (`GET /runs`). Undefined when it
 * works, else what the server said.
 */
export async function checkToken(token: string): Promise<string | undefined> {
  const response = await fetch(`${window.location.origin}/runs?limit=1`, withToken({ headers: { accept: "application/json" } }, token));
  if (response.ok) return undefined;
  return messageOf(response);
}

/**
 * A run's export (`GET /runs/:id/export`: the run, its whole journal, inbox and human requests, as
 * JSON; audited by the server), with the tab's token; `force` for a run that has not finished.
 */
export async function downloadRunExport(runId: string, force: boolean): Promise<Blob> {
  const response = await authFetch(`${window.location.origin}/runs/${encodeURIComponent(runId)}/export${force ? "?force=true" : ""}`, {
    headers: { accept: "application/json" },
  });
  if (!response.ok) throw new Error(await messageOf(response));
  return response.blob();
}

/**
 * A GET of the API that the typed client has no method for (e.g. `/overview`), with the tab's
 * token; throws an Error with the server's message on a failure.
 */
export async function getJson<T>(path: string): Promise<T> {
  const response = await authFetch(`${window.location.origin}${path}`, { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(await messageOf(response));
  return (await response.json()) as T;
}
