/** A sink for log records. */
export interface EngineLogger {
  log(level: "debug" | "info" | "warn" | "error", message: string, fields: Record<string, unknown>): void;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;

/** JSON lines on stderr at or above `level` (default from `CAIRN_LOG_LEVEL`, else "warn"). */
export function consoleLogger(level: Level | "silent" = (process.env.CAIRN_LOG_LEVEL as Level | undefined) ?? "warn"): EngineLogger {
  const threshold = level === "silent" ? Infinity : (LEVELS[level] ?? LEVELS.warn);
  return {
    log(at, message, fields) {
      if (LEVELS[at] < threshold) return;
      process.stderr.write(`${JSON.stringify({ level: at, time: new Date().toISOString(), message, ...fields })}\n`);
    },
  };
}

/** Discards everything. */
export const silentLogger: EngineLogger = { log() {} };
