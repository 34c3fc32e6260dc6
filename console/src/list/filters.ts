import type { RunRecord } from "../../../src/protocol/index.ts";
import type { RunListing } from "../api.ts";
import { agentName } from "./details.ts";

/**
 * The list's filters, all in the URL: `status` (asked of the server), `agent` and `q` (a run id
 * fragment), matched on the page shown. Case does not matter.
 */
export interface ListFilters {
  status: string;
  agent: string;
  q: string;
}

const NAMES = ["status", "agent", "q"] as const;

export function readFilters(): ListFilters {
  const params = new URLSearchParams(location.search);
  return { status: params.get("status") ?? "", agent: params.get("agent") ?? "", q: params.get("q") ?? "" };
}

export function writeFilters(filters: ListFilters): void {
  const url = new URL(location.href);
  for (const name of NAMES) {
    const value = filters[name].trim();
    if (value) url.searchParams.set(name, value);
    else url.searchParams.delete(name);
  }
  history.replaceState(null, "", url);
}

export function matchesFilters(filters: ListFilters, run: RunListing, record: RunRecord | undefined): boolean {
  const q = filters.q.trim().toLowerCase();
  if (q && !run.runId.toLowerCase().includes(q)) return false;
  const agent = filters.agent.trim().toLowerCase();
  // Until its record is read a run's agent is unknown: it stays, rather than blinking in and out.
  if (agent && record && !(agentName(record) ?? "").toLowerCase().includes(agent)) return false;
  return true;
}
