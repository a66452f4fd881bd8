import type { RunRecord } from "../core/run.js";
import type { ListRunsQuery, Store } from "../core/store.js";
import { encodeCursor, pageLimit } from "../store/common/list-query.js";
import type { RunInfo } from "./engine.js";

/** Store pages one search reads at most before it answers with what it found and a cursor to go on. */
const MAX_PAGES = 20;

/**
 * `listRuns({ q })` over what the caller may see. The store matches `q` against the raw run id,
 * workflow, error message, input and tags, which may quote a secret; so each run it finds is turned
 * into its view (secrets redacted) and kept only when the view's id, workflow, error message,
 * input or a tag contains `q`. A secret is never found by its text, nor by any prefix of it. Pages stay full: when the
 * store's page had runs only the raw text matched, the next store page is read (up to
 * {@link MAX_PAGES}, then the page is returned short with a `nextCursor`).
 */
export async function searchRuns(
  store: Pick<Store, "listRuns" | "getRunTags">,
  query: ListRunsQuery & { q: string },
  view: (run: RunRecord) => Promise<RunInfo>,
): Promise<{ runs: RunInfo[]; nextCursor?: string }> {
  const limit = pageLimit(query.limit);
  const wanted = query.q.toLowerCase();
  const runs: RunInfo[] = [];
  let cursor = query.cursor;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const page = await store.listRuns({ ...query, limit, ...(cursor === undefined ? {} : { cursor }) });
    const views = await Promise.all(page.runs.map(view));
    const matched = await Promise.all(views.map((one) => visibleMatch(store, one, wanted)));
    for (let i = 0; i < views.length; i++) {
      if (!matched[i]) continue;
      runs.push(views[i]!);
      if (runs.length === limit) {
        const more = i < views.length - 1 || page.nextCursor !== undefined;
        return more ? { runs, nextCursor: encodeCursor(page.runs[i]!) } : { runs };
      }
    }
    if (page.nextCursor === undefined) return { runs };
    cursor = page.nextCursor;
  }
  return cursor === undefined ? { runs } : { runs, nextCursor: cursor };
}

/**
 * How many runs `listRuns({ q })` would list over all its pages: the store's candidates (at most
 * `scanLimit` of them) checked against their views like {@link searchRuns}. Past `scanLimit`
 * candidates the count stops, `exact: false`.
 */
export async function countSearch(
  store: Pick<Store, "listRuns" | "getRunTags">,
  query: ListRunsQuery & { q: string },
  view: (run: RunRecord) => Promise<RunInfo>,
  scanLimit: number,
): Promise<{ total: number; exact: boolean }> {
  const wanted = query.q.toLowerCase();
  let total = 0;
  let scanned = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await store.listRuns({ ...query, limit: 200, ...(cursor === undefined ? {} : { cursor }) });
    for (const run of page.runs) {
      if (scanned++ === scanLimit) return { total, exact: false };
      if (await visibleMatch(store, await view(run), wanted)) total++;
    }
    if (page.nextCursor === undefined) return { total, exact: true };
    cursor = page.nextCursor;
  }
}

/** The view's id, workflow, (redacted) error message or (redacted) input, or one of the run's tags, contains `lowered`, in any case. */
async function visibleMatch(store: Pick<Store, "getRunTags">, run: RunInfo, lowered: string): Promise<boolean> {
  if (run.runId.toLowerCase().includes(lowered) || run.workflow.toLowerCase().includes(lowered)) return true;
  const message = run.error?.message;
  if (typeof message === "string" && message.toLowerCase().includes(lowered)) return true;
  if (run.input !== null && run.input !== undefined && (JSON.stringify(run.input) ?? "").toLowerCase().includes(lowered)) return true;
  // Tags are not secret: they are matched as stored.
  const tags = run.tags ?? (await store.getRunTags(run.runId));
  return Object.entries(tags).some(([key, value]) => `${key}:${value}`.toLowerCase().includes(lowered));
}
