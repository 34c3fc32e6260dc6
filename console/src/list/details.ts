import { useEffect, useRef, useState } from "preact/hooks";
import type { RunRecord } from "../../../src/protocol/index.ts";
import type { Api, RunListing } from "../api.ts";

/**
 * The records behind the rows on screen, for the columns the listing does not carry (agent,
 * duration, outcome, events). Each is read once per `updatedAt` (a finished run never again),
 * a few at a time, so a page of 25 costs 25 reads once and then only the runs that moved.
 */
const AT_ONCE = 4;

export function useRunDetails(api: Api, runs: readonly RunListing[] | undefined): Map<string, RunRecord> {
  const [records, setRecords] = useState(() => new Map<string, RunRecord>());
  const read = useRef(new Map<string, string>());
  useEffect(() => {
    let stopped = false;
    const wanted = (runs ?? []).filter((run) => read.current.get(run.runId) !== run.updatedAt);
    for (const run of wanted) read.current.set(run.runId, run.updatedAt);
    let next = 0;
    const worker = async () => {
      while (!stopped && next < wanted.length) {
        const run = wanted[next++] as RunListing;
        try {
          // A read already under way when the list refreshes still lands: its record is as new.
          const record = await api.getRun(run.runId);
          setRecords((current) => new Map(current).set(run.runId, record));
        } catch {
          read.current.delete(run.runId); // try again on the next refresh
        }
      }
    };
    for (let i = 0; i < AT_ONCE; i++) void worker();
    return () => {
      stopped = true;
      // What this round did not get to, the next one reads.
      for (const run of wanted.slice(next)) read.current.delete(run.runId);
    };
  }, [api, runs]);
  return records;
}

/** The agent's name as the create body gave it (`agent.name`, or a plain string). */
export function agentName(record: RunRecord | undefined): string | null {
  const agent = record?.agent as { name?: unknown } | string | null | undefined;
  if (typeof agent === "string") return agent;
  return typeof agent?.name === "string" ? agent.name : null;
}
