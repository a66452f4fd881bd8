import { CairnClient } from "cairn/client";

/**
 * The API token, when the server runs with `--auth tokens`: given once as `/ui/?token=cairn_…` and
 * kept in this browser's session storage (not in the URL afterwards).
 */
function token(): string | null {
  const url = new URL(window.location.href);
  const given = url.searchParams.get("token");
  if (given) {
    window.sessionStorage.setItem("cairn.token", given);
    url.searchParams.delete("token");
    window.history.replaceState(null, "", url.toString());
  }
  return window.sessionStorage.getItem("cairn.token");
}

const apiToken = token();

/** The API of the server that serves the dashboard: same origin, with the session's token if any. */
export const api = new CairnClient({ baseUrl: window.location.origin, ...(apiToken ? { headers: { authorization: `Bearer ${apiToken}` } } : {}) });
