import { CairnClient } from "cairn/client";

/** The API of the server that serves the dashboard: same origin, no credentials. */
export const api = new CairnClient({ baseUrl: window.location.origin });
