import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One forward-only schema change, from `src/store/migrations/<backend>/NNNN_name.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE_NAME = /^(\d{4})_([a-z0-9_-]+)\.sql$/;

/**
 * Reads the numbered SQL files of one backend, in version order, and checks that they are
 * numbered 1, 2, … without gaps. `dir` is a URL relative to the calling module, so it works
 * from src/ (vitest) and from dist/ (copied by scripts/copy-assets.mjs).
 * @throws Error when the files are missing or misnumbered: the package is broken.
 */
export function loadMigrations(dir: URL, backend: string): Migration[] {
  const path = fileURLToPath(dir);
  const migrations = readdirSync(path)
    .flatMap((file) => {
      const match = FILE_NAME.exec(file);
      return match ? [{ version: Number(match[1]), name: file, sql: readFileSync(`${path}${file}`, "utf8") }] : [];
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1)
      throw new Error(`${backend} migrations in ${path} must be numbered 0001, 0002, … without gaps; found ${migration.name} at position ${index + 1}.`);
  });
  if (migrations.length === 0) throw new Error(`No ${backend} migrations found in ${path}; the package is incomplete.`);
  return migrations;
}
