import {
  type Placement,
  type PoolHostInfo,
  QUEUE_RUNS_LISTED,
  type QueueDetail,
  type QueueInfo,
} from "../protocol/index.ts";
import { usedSlots, waitReason } from "./assign.ts";
import type { DispatchStore, QueueSettings } from "./dispatch-store.ts";
import type { Host } from "./hosts.ts";

// What a dispatcher shows: a run's place in its queue, the queue's load, its connected hosts.

const iso = (ms: number) => new Date(ms).toISOString();

export function placementOf(
  store: DispatchStore,
  settings: QueueSettings,
  hosts: readonly Host[],
  runId: string,
  ended: boolean,
): Placement {
  const run = store.find(runId);
  // A finished run's row is dropped after a day; the run's own record still says it ended.
  if (!run && ended) return { poolHost: null, queuePosition: null, dispatch: { state: "finished", reason: null } };
  if (!run) {
    const reason = "its dispatcher has not been told of it yet (the notification is retried until it is)";
    return { poolHost: null, queuePosition: null, dispatch: { state: "queued", reason } };
  }
  switch (run.state) {
    case "queued": {
      const queued = store.queued();
      const position = queued.findIndex((entry) => entry.runId === runId) + 1;
      const reason = waitReason(run, hosts, store.active(), settings);
      return { poolHost: null, queuePosition: position, dispatch: { state: "queued", reason } };
    }
    case "assigned": {
      const reason = `assigned to host ${run.hostId}; waiting for its claim until ${iso(run.leaseDue ?? 0)}`;
      return { poolHost: run.hostId, queuePosition: null, dispatch: { state: "assigned", reason } };
    }
    default:
      return {
        poolHost: run.hostId ?? run.lastHost,
        queuePosition: null,
        dispatch: { state: run.state, reason: run.reason },
      };
  }
}

/** Each run's host as its record shows it (placementOf): the holder, or the last one; null while queued. */
export function poolHostsOf(store: DispatchStore, runIds: readonly string[]): Record<string, string | null> {
  const hosts: Record<string, string | null> = {};
  for (const runId of runIds) {
    const run = store.find(runId);
    hosts[runId] = !run || run.state === "queued" ? null : (run.hostId ?? run.lastHost);
  }
  return hosts;
}

export function queueInfoOf(store: DispatchStore, settings: QueueSettings, hosts: readonly Host[]): QueueInfo {
  const active = store.active();
  const used = usedSlots(active);
  return {
    name: settings.queue,
    maxConcurrent: settings.maxConcurrent,
    assignMs: settings.assignMs,
    depth: store.queued().length,
    running: active.length,
    hosts: hosts.length,
    freeSlots: hosts.reduce((sum, host) => sum + Math.max(0, host.slots - (used.get(host.hostId) ?? 0)), 0),
  };
}

export function hostsOf(store: DispatchStore, settings: QueueSettings, hosts: readonly Host[]): PoolHostInfo[] {
  const held = store.held();
  return hosts.map((host) => {
    const runs = held.filter((run) => run.hostId === host.hostId);
    return {
      hostId: host.hostId,
      queue: settings.queue,
      keyId: host.keyId,
      profiles: host.profiles,
      labels: host.labels,
      slots: host.slots,
      freeSlots: Math.max(0, host.slots - runs.length),
      connectedAt: iso(host.connectedAt),
      runs: runs.map((run) => ({
        runId: run.runId,
        assignmentId: run.assignmentId ?? "",
        generation: run.generation,
        state: run.state,
      })),
    };
  });
}

export function queueDetailOf(store: DispatchStore, settings: QueueSettings, hosts: readonly Host[]): QueueDetail {
  let position = 0;
  const runs = store.unfinished(QUEUE_RUNS_LISTED).map((run) => ({
    runId: run.runId,
    profile: run.profile,
    state: run.state,
    generation: run.generation,
    queuePosition: run.state === "queued" ? ++position : null,
    poolHost: run.state === "queued" ? null : (run.hostId ?? run.lastHost),
    createdAt: iso(run.queuedAt),
  }));
  return { ...queueInfoOf(store, settings, hosts), runs };
}
