import type { RunRecord } from "../../../src/protocol/index.ts";
import type { RunListing } from "../api.ts";
import { agentName } from "./details.ts";

/**
 * The list's filters, all in the URL under the API's own names: `status`, `tag` (repeated: runs
 * with every tag), `meta.KEY=value` (repeated) and `createdAfter` / `createdBefore` are asked of
 * the server; `agent` and `q` (a run id fragment) are matched on the page shown. Case does not
 * matter but for tags and metadata.
 */
export interface ListFilters {
  status: string;
  agent: string;
  q: string;
  /** Space-separated tags, as typed. */
  tags: string;
  /** Space-separated `KEY=value` pairs, as typed. */
  meta: string;
  /** ISO date-times, or "". */
  createdAfter: string;
  createdBefore: string;
}

/** The tags a filter asks for. */
export function tagsOf(filters: ListFilters): string[] {
  return [...new Set(filters.tags.split(/[\s,]+/).filter(Boolean))];
}

/** The `KEY=value` pairs a filter asks for; a word without `=` is still being typed and asks nothing. */
export function metaOf(filters: ListFilters): [string, string][] {
  const pairs = new Map<string, string>();
  for (const word of filters.meta.split(/\s+/)) {
    const at = word.indexOf("=");
    if (at > 0) pairs.set(word.slice(0, at), word.slice(at + 1));
  }
  return [...pairs];
}

/** What the server is asked: when it changes, paging starts again. */
export function serverKey(filters: ListFilters): string {
  return JSON.stringify([
    filters.status,
    tagsOf(filters),
    metaOf(filters),
    filters.createdAfter,
    filters.createdBefore,
  ]);
}

const NAMES = ["status", "agent", "q", "createdAfter", "createdBefore"] as const;
const META = "meta.";

export function readFilters(): ListFilters {
  const params = new URLSearchParams(location.search);
  const meta = [...params].filter(([name]) => name.startsWith(META) && name.length > META.length);
  return {
    status: params.get("status") ?? "",
    agent: params.get("agent") ?? "",
    q: params.get("q") ?? "",
    tags: params.getAll("tag").join(" "),
    meta: meta.map(([name, value]) => `${name.slice(META.length)}=${value}`).join(" "),
    createdAfter: validInstant(params.get("createdAfter")),
    createdBefore: validInstant(params.get("createdBefore")),
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
  for (const name of [...url.searchParams.keys()]) if (name.startsWith(META)) url.searchParams.delete(name);
  for (const [key, value] of metaOf(filters)) url.searchParams.append(`${META}${key}`, value);
  history.replaceState(null, "", url);
}

function validInstant(text: string | null): string {
  return text && !Number.isNaN(Date.parse(text)) ? new Date(text).toISOString() : "";
}

/** A `datetime-local` input's value (local time, to the minute) for an ISO instant, and back. */
export function localInput(iso: string): string {
  if (!iso) return "";
  const at = new Date(iso);
  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

export function fromLocalInput(value: string): string {
  return value && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : "";
}

export function matchesFilters(filters: ListFilters, run: RunListing, record: RunRecord | undefined): boolean {
  const q = filters.q.trim().toLowerCase();
  if (q && !run.runId.toLowerCase().includes(q)) return false;
  const agent = filters.agent.trim().toLowerCase();
  // Until its record is read a run's agent is unknown: it stays, rather than blinking in and out.
  if (agent && record && !(agentName(record) ?? "").toLowerCase().includes(agent)) return false;
  return true;
}
