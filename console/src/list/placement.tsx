import { useEffect, useState } from "preact/hooks";
import type { RunRecord } from "../../../src/protocol/index.ts";
import type { Api, RunListing } from "../api.ts";

export interface RowPlacement {
  host: string | null;
  position: number | null;
  reason: string | null;
}

/**
 * Where the listed runs stand in the pools: the host holding each (one `GET /v1/pools`) and, for
 * the queued rows only, the queue position and waiting reason from their records. A tenant
 * without pools (or a failed call) just gets no placement.
 */
export function usePlacements(api: Api, runs: RunListing[] | undefined): Map<string, RowPlacement> {
  const [placements, setPlacements] = useState(new Map<string, RowPlacement>());
  const key = (runs ?? []).map((r) => `${r.runId}:${r.status}`).join(",");
  useEffect(() => {
    if (!runs || runs.length === 0) return;
    let current = true;
    const hosts = api.pools().then(
      ({ hosts }) => new Map(hosts.flatMap((h) => h.runs.map((r) => [r.runId, h.hostId] as const))),
      () => new Map<string, string>(),
    );
    const queued = runs.filter((r) => r.status === "queued");
    const records = Promise.all(
      queued.map((r) =>
        api.getRun(r.runId).then(
          (run) => [r.runId, run as RunRecord | null] as const,
          () => [r.runId, null] as const,
        ),
      ),
    );
    void Promise.all([hosts, records]).then(([byRun, placed]) => {
      if (!current) return;
      const next = new Map<string, RowPlacement>();
      for (const run of runs) next.set(run.runId, { host: byRun.get(run.runId) ?? null, position: null, reason: null });
      for (const [runId, record] of placed) {
        next.set(runId, {
          host: record?.poolHost ?? byRun.get(runId) ?? null,
          position: record?.queuePosition ?? null,
          reason: record?.dispatch?.reason ?? null,
        });
      }
      setPlacements(next);
    });
    return () => {
      current = false;
    };
  }, [api, key]);
  return placements;
}

/** The runs list's "Queue position" and "Host" cells. */
export function PlacementCells({ placement }: { placement: RowPlacement | undefined }) {
  return (
    <>
      <td data-queue-position>
        {placement?.position ?? <span class="muted">—</span>}
        {placement?.reason && <span class="placement-reason">{placement.reason}</span>}
      </td>
      <td data-host>{placement?.host ? <code>{placement.host}</code> : <span class="muted">—</span>}</td>
    </>
  );
}
