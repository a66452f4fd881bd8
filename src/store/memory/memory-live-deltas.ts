import type { LiveDeltaRecord, LiveDeltaStore, NewLiveDelta } from "../../core/live-delta-store.js";

/** The memory store's live deltas (see {@link LiveDeltaStore}): an array of records and a map of advertisements. */
export class MemoryLiveDeltas implements LiveDeltaStore {
  private records: LiveDeltaRecord[] = [];
  private nextId = 1;
  /** Expiry by `origin\0runId`. */
  private readonly advertised = new Map<string, { origin: string; runId: string; expiresAt: number }>();
  private readonly listeners = new Set<() => void>();

  async advertiseLiveDeltas(origin: string, runIds: readonly string[], expiresAt: number): Promise<void> {
    for (const runId of runIds) this.advertised.set(`${origin}\0${runId}`, { origin, runId, expiresAt });
  }

  async retireLiveDeltas(origin: string, runIds?: readonly string[]): Promise<void> {
    for (const [key, row] of this.advertised) if (row.origin === origin && (runIds === undefined || runIds.includes(row.runId))) this.advertised.delete(key);
  }

  async listStreamedRuns(origin: string, now: number): Promise<string[]> {
    const runs = new Set<string>();
    for (const row of this.advertised.values()) if (row.origin !== origin && row.expiresAt > now) runs.add(row.runId);
    return [...runs];
  }

  async writeLiveDeltas(origin: string, records: readonly NewLiveDelta[], now: number): Promise<void> {
    if (records.length === 0) return;
    for (const record of records) {
      if (record.kind === "end") this.records = this.records.filter((r) => r.runId !== record.runId || r.opKey !== record.opKey);
      // Copied through JSON, as a database would store it.
      const pieces = JSON.parse(JSON.stringify(record.pieces)) as unknown[];
      this.records.push({ id: this.nextId++, origin, at: now, runId: record.runId, opKey: record.opKey, attempt: record.attempt, kind: record.kind, pieces });
    }
    for (const listener of [...this.listeners]) queueMicrotask(listener);
  }

  async readLiveDeltas(runIds: readonly string[], afterId: number, origin: string, limit = 1000): Promise<LiveDeltaRecord[]> {
    const wanted = new Set(runIds);
    return this.records
      .filter((r) => r.id > afterId && r.origin !== origin && wanted.has(r.runId))
      .slice(0, limit)
      .map((r) => ({ ...r, pieces: [...r.pieces] }));
  }

  async pruneLiveDeltas(before: number): Promise<number> {
    const newest = new Map<string, number>();
    for (const r of this.records) {
      const key = `${r.runId}\0${r.opKey}`;
      newest.set(key, Math.max(newest.get(key) ?? 0, r.at));
    }
    const kept = this.records.filter((r) => newest.get(`${r.runId}\0${r.opKey}`)! >= before);
    const pruned = this.records.length - kept.length;
    this.records = kept;
    for (const [key, row] of this.advertised) if (row.expiresAt < before) this.advertised.delete(key);
    return pruned;
  }

  onLiveDeltas(listener: () => void): () => void {
    const entry = (): void => listener();
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }
}
