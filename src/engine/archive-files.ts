import { rename, writeFile } from "node:fs/promises";

/** The file an archived run is written to: its id made safe as a file name. */
export function archiveFileName(runId: string): string {
  return `${encodeURIComponent(runId).replace(/\./g, "%2E")}.json`;
}

/** Writes a file atomically: a temporary file renamed over the target, so a crash never leaves half an archive. */
export async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, text, { flag: "wx" });
  await rename(tmp, path);
}
