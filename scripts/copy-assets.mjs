// Copies non-TypeScript assets (SQL migrations) next to the compiled code.
import { cpSync } from "node:fs";
cpSync("src/store/migrations", "dist/src/store/migrations", { recursive: true });
