// A Durable Object has one alarm; each object keeps it at the earliest deadline its storage holds.
// The run (src/run/alarm.ts) and the dispatcher (src/pools/dispatch.ts) both arm theirs here.

/**
 * Sets the alarm to `next`, or deletes it for null, reading the current one first so an alarm
 * already right is not written again. Called on every wake, so a deadline committed by an object
 * that died before arming it is armed then.
 */
export async function keepAlarmAt(storage: DurableObjectStorage, next: number | null): Promise<void> {
  const current = await storage.getAlarm();
  if (next === null) {
    if (current !== null) await storage.deleteAlarm();
  } else if (current !== next) await storage.setAlarm(next);
}

/**
 * Arms the alarm without reading it first. Called in the same synchronous step as the commit
 * that made `next` — no await between them — it is written with that commit (an object's writes
 * up to its next await are coalesced), so no deadline is ever stored unarmed.
 */
export function armWithCommit(storage: DurableObjectStorage, next: number | null): Promise<void> {
  return next === null ? storage.deleteAlarm() : storage.setAlarm(next);
}
