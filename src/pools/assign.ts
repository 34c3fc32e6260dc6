import type { QueuedRun, QueueSettings } from "./dispatch-store.ts";
import type { Host } from "./hosts.ts";

// The dispatch rules (docs/PROTOCOL.md, "Pools"): queued runs oldest first, each to a connected
// host serving its profile with a free slot, while the queue holds fewer than maxConcurrent.

export interface Assignment {
  run: QueuedRun;
  host: Host;
}

/** Slots each host uses: the runs assigned to it or claimed through it. */
export function usedSlots(active: readonly QueuedRun[]): Map<string, number> {
  const used = new Map<string, number>();
  for (const run of active) if (run.hostId !== null) used.set(run.hostId, (used.get(run.hostId) ?? 0) + 1);
  return used;
}

function serves(host: Host, run: QueuedRun, used: Map<string, number>, now: number): boolean {
  if (!host.profiles.includes(run.profile)) return false;
  if (host.slots - (used.get(host.hostId) ?? 0) <= 0) return false;
  return !(run.avoidHost === host.hostId && (run.avoidUntil ?? 0) > now);
}

/**
 * Picks the host for a run: one that serves it, preferably not the one that last held it (a lost
 * run goes elsewhere when it can), then the one with the most free slots, then by hostId.
 */
function pickHost(run: QueuedRun, hosts: readonly Host[], used: Map<string, number>, now: number): Host | null {
  const free = (host: Host) => host.slots - (used.get(host.hostId) ?? 0);
  const candidates = hosts
    .filter((host) => serves(host, run, used, now))
    .sort((a, b) => {
      const previous = Number(a.hostId === run.lastHost) - Number(b.hostId === run.lastHost);
      return previous !== 0 ? previous : free(b) - free(a) || a.hostId.localeCompare(b.hostId);
    });
  return candidates[0] ?? null;
}

/** The assignments to make now, in queue order; the runs come back assigned, leases set. */
export function chooseAssignments(
  queued: readonly QueuedRun[],
  active: readonly QueuedRun[],
  hosts: readonly Host[],
  settings: QueueSettings,
  now: number,
  newId: () => string,
): Assignment[] {
  const used = usedSlots(active);
  let running = active.length;
  const limit = settings.maxConcurrent ?? Number.POSITIVE_INFINITY;
  const assignments: Assignment[] = [];
  for (const run of queued) {
    if (running >= limit) break;
    const host = pickHost(run, hosts, used, now);
    if (!host) continue;
    used.set(host.hostId, (used.get(host.hostId) ?? 0) + 1);
    running += 1;
    assignments.push({
      host,
      run: {
        ...run,
        state: "assigned",
        hostId: host.hostId,
        assignmentId: newId(),
        tokenId: null,
        leaseDue: now + settings.assignMs,
        avoidHost: null,
        avoidUntil: null,
        reason: null,
        updatedAt: now,
      },
    });
  }
  return assignments;
}

/** Why a queued run is still waiting, in words for its record. */
export function waitReason(
  run: QueuedRun,
  hosts: readonly Host[],
  active: readonly QueuedRun[],
  settings: QueueSettings,
): string {
  const serving = hosts.filter((host) => host.profiles.includes(run.profile));
  if (serving.length === 0) return `no connected pool host serves profile "${run.profile}"`;
  if (settings.maxConcurrent !== null && active.length >= settings.maxConcurrent) {
    return `the queue holds its maxConcurrent of ${settings.maxConcurrent} runs`;
  }
  return `waiting for a free slot on a host serving "${run.profile}"`;
}
