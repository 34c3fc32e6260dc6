/**
 * In-memory wake-ups for readers waiting at the tail of a log (long-poll, SSE). Nothing durable
 * depends on these: a reader that is not woken times out and reads again.
 */
export class LogWaiters {
  private readonly waiting = new Set<(woken: boolean) => void>();

  /** Resolves true when `notify` runs, false after `ms`. */
  wait(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve(woken);
      };
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      this.waiting.add(done);
    });
  }

  /** Wakes every waiting reader (after an append, a close or a delete). */
  notify(): void {
    for (const done of [...this.waiting]) done(true);
  }
}
