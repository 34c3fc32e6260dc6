import { useEffect, useState } from "preact/hooks";
import { ApiError } from "../api.ts";

/**
 * Loads `load()` now and every `everyMs` after each answer. A refusal (an HTTP error) stops the
 * polling and is kept; a network failure keeps the last answer and marks it stale.
 */
export function usePoll<T>(load: () => Promise<T>, everyMs: number, deps: unknown[]) {
  const [value, setValue] = useState<T | null>(null);
  const [problem, setProblem] = useState<ApiError | null>(null);
  const [stale, setStale] = useState(false);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = () => {
      load()
        .then((next) => {
          if (stopped) return;
          setValue(next);
          setStale(false);
        })
        .catch((error: unknown) => {
          if (stopped) return;
          if (error instanceof ApiError && error.status !== undefined) {
            stopped = true;
            setProblem(error);
          } else setStale(true);
        })
        .finally(() => {
          if (!stopped) timer = setTimeout(tick, everyMs);
        });
    };
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, deps);
  return { value, problem, stale };
}
