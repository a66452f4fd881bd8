import type { RunRecord } from "../core/run.js";
import type { ListRunsQuery, Store } from "../core/store.js";
import { encodeCursor, pageLimit } from "../store/common/list-query.js";
import type { RunInfo } from "./engine.js";

/** Store pages one search reads at most before it answers with what it found and a cursor to go on. */
const MAX_PAGES = 20;

/**
 * `listRuns({ q })` over what the caller may see. The store matches `q` against the raw run id,
 * workflow and error message, which may quote a secret; so each run it finds is turned into its
 * view (secrets redacted) and kept only when the view's id, workflow or error message contains
 * `q`. A secret is never found by its text, nor by any prefix of it. Pages stay full: when the
 * store's page had runs only the raw text matched, the next store page is read (up to
 * {@link MAX_PAGES}, then the page is returned short with a `nextCursor`).
 */
export async function searchRuns(
  store: Pick<Store, "listRuns">,
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
    for (let i = 0; i < views.length; i++) {
      if (!visibleMatch(views[i]!, wanted)) continue;
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

/** The view's id, workflow or (redacted) error message contains `lowered`, in any case. */
function visibleMatch(run: RunInfo, lowered: string): boolean {
  if (run.runId.toLowerCase().includes(lowered) || run.workflow.toLowerCase().includes(lowered)) return true;
  const message = run.error?.message;
  return typeof message === "string" && message.toLowerCase().includes(lowered);
}
