/**
 * What a run costs on Cloudflare, from the counts `npm run bench -- --only counts` measures
 * (measure-counts.ts) and Cloudflare's published prices (docs/COST.md cites the pages). Prices
 * and the typical run are constants here; every usage figure comes from the metered run.
 */
import type { CountsReport } from "./measure-counts.ts";

/** Workers Paid (Standard) and Durable Objects (SQLite backend) prices, USD. */
export const PRICES = {
  monthlyBase: 5,
  workerRequestsPerMillion: 0.3,
  workerCpuPerMillionMs: 0.02,
  objectRequestsPerMillion: 0.15,
  /** Incoming WebSocket messages are billed as requests at 20:1; outgoing ones are free. */
  webSocketMessagesPerRequest: 20,
  objectPerMillionGbS: 12.5,
  /** Duration is billed for the 128 MB an object is allocated, whatever it uses. */
  objectGb: 0.128,
  rowsReadPerMillion: 0.001,
  rowsWrittenPerMillion: 1,
  storedPerGbMonth: 0.2,
};

/** Included in the monthly base, per month. */
export const INCLUDED = {
  workerRequests: 10e6,
  workerCpuMs: 30e6,
  objectRequests: 1e6,
  objectGbS: 400_000,
  rowsRead: 25e9,
  rowsWritten: 50e6,
  storedGbMonth: 5,
};

/** The typical run. The bridge heartbeats every heartbeatMs / 3 = 10 s by default. */
export const TYPICAL = { events: 10_000, hours: 1, heartbeatEverySeconds: 10, retentionDays: 30 };
const HEARTBEATS = (TYPICAL.hours * 3600) / TYPICAL.heartbeatEverySeconds;

export interface Usage {
  workerRequests: number;
  /** Upper bound: the worker's wall time, which includes waiting for the object. */
  workerCpuMs: number;
  /** Calls, alarms, and incoming WebSocket messages already divided by 20. */
  objectRequests: number;
  objectGbS: number;
  rowsRead: number;
  rowsWritten: number;
  /** GB-months stored: the run's data over its retention. */
  storedGbMonth: number;
  /** What the purged run's tombstone keeps stored, per month, afterwards. */
  tombstoneGbMonthPerMonth: number;
}

const CLASSES = ["RunObject", "TenantIndex"];

/**
 * One typical run's usage: the metered run's setup, finish and purge, its ingest per event times
 * 10,000, and its heartbeat times an hour's worth.
 */
export function typicalRunUsage(report: CountsReport): Usage {
  const phase = (key: string) => report.rows.get(key) ?? [0, 0, 0, 0, 0, 0, 0];
  const perRun = (key: string) => {
    const [setup = 0, perEvent = 0, perHeartbeat = 0, finish = 0, , purge = 0] = phase(key);
    return setup + perEvent * TYPICAL.events + perHeartbeat * HEARTBEATS + finish + purge;
  };
  const sum = (suffix: string) => CLASSES.reduce((total, name) => total + perRun(`${name}: ${suffix}`), 0);
  // The run's own object; the tenant index is one object per tenant, shared by all its runs.
  const bytes = (record: Record<string, number>) => record.RunObject ?? 0;
  const months = TYPICAL.retentionDays / 30;
  return {
    workerRequests: perRun("worker requests"),
    workerCpuMs: perRun("worker active ms (wall time of its fetch, the object's share included)"),
    objectRequests:
      sum("calls (RPC, fetch)") +
      sum("alarms run") +
      sum("WebSocket messages received") / PRICES.webSocketMessagesPerRequest,
    objectGbS: (sum("active ms (a call, message or alarm in progress)") / 1000) * PRICES.objectGb,
    rowsRead: sum("SQLite rows read"),
    rowsWritten: sum("SQLite rows written") + sum("alarm writes (setAlarm, each billed as a row written)"),
    storedGbMonth: (bytes(report.databaseBytes) / 1e9) * months,
    tombstoneGbMonthPerMonth: bytes(report.purgedBytes) / 1e9,
  };
}

export interface Cost {
  lines: { item: string; usage: number; unit: string; perRun: number; millionRuns: number }[];
  perRun: number;
  millionRuns: number;
}

/** USD per run at the marginal rates, and for a million runs in a month after what is included. */
export function cost(usage: Usage): Cost {
  const runs = 1e6;
  const item = (name: string, amount: number, unit: string, rate: number, included: number) => ({
    item: name,
    usage: amount,
    unit,
    perRun: amount * rate,
    millionRuns: Math.max(0, amount * runs - included) * rate,
  });
  const lines = [
    item(
      "Workers requests",
      usage.workerRequests,
      "requests",
      PRICES.workerRequestsPerMillion / 1e6,
      INCLUDED.workerRequests,
    ),
    item(
      "Workers CPU (upper bound)",
      usage.workerCpuMs,
      "ms",
      PRICES.workerCpuPerMillionMs / 1e6,
      INCLUDED.workerCpuMs,
    ),
    item(
      "Durable Object requests",
      usage.objectRequests,
      "requests",
      PRICES.objectRequestsPerMillion / 1e6,
      INCLUDED.objectRequests,
    ),
    item("Durable Object duration", usage.objectGbS, "GB-s", PRICES.objectPerMillionGbS / 1e6, INCLUDED.objectGbS),
    item("SQLite rows read", usage.rowsRead, "rows", PRICES.rowsReadPerMillion / 1e6, INCLUDED.rowsRead),
    item("SQLite rows written", usage.rowsWritten, "rows", PRICES.rowsWrittenPerMillion / 1e6, INCLUDED.rowsWritten),
    item(
      `SQLite stored, ${TYPICAL.retentionDays}-day retention`,
      usage.storedGbMonth,
      "GB-month",
      PRICES.storedPerGbMonth,
      INCLUDED.storedGbMonth,
    ),
  ];
  const perRun = lines.reduce((total, line) => total + line.perRun, 0);
  const millionRuns = PRICES.monthlyBase + lines.reduce((total, line) => total + line.millionRuns, 0);
  return { lines, perRun, millionRuns };
}

const usd = (n: number) =>
  n >= 1 ? `$${n.toLocaleString("en-US", { maximumFractionDigits: 0 })}` : `$${n.toPrecision(3)}`;
const num = (n: number) => n.toLocaleString("en-US", { maximumSignificantDigits: 4 });

/** The cost table docs/COST.md carries. */
export function printCost(report: CountsReport): void {
  const usage = typicalRunUsage(report);
  const result = cost(usage);
  console.log(
    `\ncost of a typical run (${TYPICAL.events.toLocaleString("en-US")} events in 100-event frames, 5 viewers, ` +
      `${TYPICAL.hours} h with a heartbeat every ${TYPICAL.heartbeatEverySeconds} s, ${TYPICAL.retentionDays}-day retention), bench/cost-model.ts\n`,
  );
  console.log("| item | usage per run | cost per run | a million runs in a month (after what is included) |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const line of result.lines) {
    console.log(`| ${line.item} | ${num(line.usage)} ${line.unit} | ${usd(line.perRun)} | ${usd(line.millionRuns)} |`);
  }
  console.log(`| Workers Paid base | | | ${usd(PRICES.monthlyBase)} |`);
  console.log(`| **total** | | **${usd(result.perRun)}** | **${usd(result.millionRuns)}** |`);
  const tombstone = usage.tombstoneGbMonthPerMonth * PRICES.storedPerGbMonth * 1e6;
  console.log(
    `\nafterwards each purged run's tombstone keeps ${num(usage.tombstoneGbMonthPerMonth * 1e9)} bytes: ${usd(tombstone)} a month per million purged runs`,
  );
}
