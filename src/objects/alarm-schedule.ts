// A Durable Object has one alarm; each object keeps it at the earliest deadline its storage holds.
// The run (src/run/alarm.ts) and the dispatcher (src/pools/dispatch.ts) both arm theirs here.

/**
 * The latest time an alarm can hold: workerd refuses dates after 2189 with a TypeError. A deadline
 * past it (a stream's TTL of 2^53 seconds) is armed at the horizon; the object then finds nothing
 * due and arms it there again, so the deadline itself stays exact in storage.
 */
export const ALARM_HORIZON_MS = Date.UTC(2189, 0, 1);

/** The time to arm for a deadline: the deadline, or the horizon when it lies beyond. */
export function alarmTimeFor(deadline: number): number {
  return Math.min(deadline, ALARM_HORIZON_MS);
}

/**
 * Sets the alarm to `next`, or deletes it for null, reading the current one first so an alarm
 * already right is not written again. Called on every wake, so a deadline committed by an object
 * that died before arming it is armed then.
 */
export async function keepAlarmAt(storage: DurableObjectStorage, next: number | null): Promise<void> {
  const current = await storage.getAlarm();
  if (next === null) {
    if (current !== null) await storage.deleteAlarm();
  } else if (current !== alarmTimeFor(next)) await storage.setAlarm(alarmTimeFor(next));
}

/**
 * Arms the alarm without reading it first. Called in the same synchronous step as the commit
 * that made `next` — no await between them — it is written with that commit (an object's writes
 * up to its next await are coalesced), so no deadline is ever stored unarmed.
 */
export function armWithCommit(storage: DurableObjectStorage, next: number | null): Promise<void> {
  return next === null ? storage.deleteAlarm() : storage.setAlarm(alarmTimeFor(next));
}
