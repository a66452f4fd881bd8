// Copies non-TypeScript assets (SQL migrations) next to the compiled code, replacing what was there
// so a renamed or removed migration never lingers in dist/.
import { cpSync, rmSync } from "node:fs";
rmSync("dist/src/store/migrations", { recursive: true, force: true });
cpSync("src/store/migrations", "dist/src/store/migrations", { recursive: true });
