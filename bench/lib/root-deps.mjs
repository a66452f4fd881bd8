// The repository's own dependencies (pg, better-sqlite3), resolved from the root package.
// bench/ has its own node_modules for the peers (DBOS, LangGraph), which bring their own `pg` and
// `better-sqlite3`; a bare `import "pg"` from bench/ would resolve those, not the copies Cairn's store
// loads, and the bench's SQL counting would then patch a client class the store never uses.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const ROOT_DIR = fileURLToPath(new URL("../..", import.meta.url));
export const rootRequire = createRequire(fileURLToPath(new URL("../../package.json", import.meta.url)));
