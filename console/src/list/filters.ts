import type { RunRecord } from "../../../src/protocol/index.ts";
import type { RunListing } from "../api.ts";
import { agentName } from "./details.ts";

/**
 * The list's filters, all in the URL: `status` and `tag` (repeated; asked of the server: runs with
 * every tag), `agent` and `q` (a run id fragment), matched on the page shown. Case does not matter
 * but for tags.
 */
export interface ListFilters {
  status: string;
  agent: string;
  q: string;
  /** Space-separated tags, as typed. */
  tags: string;
}

/** The tags a filter asks for. */
export function tagsOf(filters: ListFilters): string[] {
  return [...new Set(filters.tags.split(/[\s,]+/).filter(Boolean))];
}

const NAMES = ["status", "agent", "q"] as const;

export function readFilters(): ListFilters {
  const params = new URLSearchParams(location.search);
  return {
    status: params.get("status") ?? "",
    agent: params.get("agent") ?? "",
    q: params.get("q") ?? "",
    tags: params.getAll("tag").join(" "),
  };
}

export function writeFilters(filters: ListFilters): void {
  const url = new URL(location.href);
  for (const name of NAMES) {
    const value = filters[name].trim();
    if (value) url.searchParams.set(name, value);
    else url.searchParams.delete(name);
  }
  url.searchParams.delete("tag");
  for (const tag of tagsOf(filters)) url.searchParams.append("tag", tag);
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
