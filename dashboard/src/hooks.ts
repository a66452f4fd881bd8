import { useCallback, useEffect, useRef, useState } from "react";

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  refresh: () => void;
}

/**
 * Loads `load()` now and every `intervalMs` while the page is visible; keeps the last good data
 * on an error (shown beside it). `deps` restart it.
 */
export function usePolling<T>(load: () => Promise<T>, intervalMs: number, deps: unknown[]): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const next = await loadRef.current();
        if (!live) return;
        setData(next);
        setError(undefined);
      } catch (caught) {
        if (live) setError(caught as Error);
      } finally {
        if (live) {
          setLoading(false);
          timer = setTimeout(() => void run(), intervalMs);
        }
      }
    };
    setLoading(true);
    void run();
    return () => {
      live = false;
      clearTimeout(timer);
    };
    // `deps` are the caller's; `load` is read through a ref so a new closure does not restart polling.
  }, [...deps, tick, intervalMs]);
  const refresh = useCallback(() => setTick((n) => n + 1), []);
  return { data, error, loading, refresh };
}
