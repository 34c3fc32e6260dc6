/**
 * Counts for the cost model, read from `npm run serve --meter` (serve/meter.js) around one typical
 * run: created with 5 viewers watching, claimed, 10,000 events in 100-event frames, 3 heartbeats,
 * completed; then a late viewer replaying it whole, and its purge (what the retention alarm does).
 * Counts, not timings: requests, WebSocket messages, alarms, SQLite statements and rows.
 */
import { BENCH_API_KEY, call } from "./client.ts";
import { runnerEvent } from "./payloads.ts";
import { createRun, openRunnerSocket } from "./runner-socket.ts";
import { sleep } from "./sleep.ts";
import type { Target } from "./targets.ts";
import { openViewer, within } from "./viewer-socket.ts";

interface ClassMeter {
  calls: number;
  webSocketMessages: number;
  alarms: number;
  activeMs: number;
  databaseBytes: number;
  sql: { statements: number; rowsRead: number; rowsWritten: number };
  storage: { getAlarm: number; setAlarm: number; deleteAlarm: number; transactions: number };
}
interface Meter {
  worker: { requests: number; activeMs: number };
  classes: Record<string, ClassMeter>;
  webSocketSends: number;
}

export const FRAMES = 100;
export const PER_FRAME = 100;
export const VIEWERS = 5;
export const HEARTBEATS = 3;

async function readMeter(target: Target): Promise<Meter> {
  const res = await call("GET", `${target.url}/__meter`, { expect: [200] });
  return (await res.json()) as Meter;
}

/** The meter as named numbers, one per table row. */
function flatten(meter: Meter): Map<string, number> {
  const rows = new Map<string, number>([
    ["worker requests", meter.worker.requests],
    ["worker active ms (wall time of its fetch, the object's share included)", meter.worker.activeMs],
    ["WebSocket messages sent by objects", meter.webSocketSends],
  ]);
  for (const [name, c] of Object.entries(meter.classes)) {
    rows.set(`${name}: calls (RPC, fetch)`, c.calls);
    rows.set(`${name}: WebSocket messages received`, c.webSocketMessages);
    rows.set(`${name}: alarms run`, c.alarms);
    rows.set(
      `${name}: alarm reads + writes (get/set/deleteAlarm)`,
      c.storage.getAlarm + c.storage.setAlarm + c.storage.deleteAlarm,
    );
    rows.set(`${name}: alarm writes (setAlarm, each billed as a row written)`, c.storage.setAlarm);
    rows.set(`${name}: transactions`, c.storage.transactions);
    rows.set(`${name}: SQL statements`, c.sql.statements);
    rows.set(`${name}: SQLite rows read`, c.sql.rowsRead);
    rows.set(`${name}: SQLite rows written`, c.sql.rowsWritten);
    rows.set(`${name}: active ms (a call, message or alarm in progress)`, c.activeMs);
  }
  return rows;
}

export interface CountsReport {
  columns: string[];
  rows: Map<string, number[]>;
  /** sql.databaseSize per class after the run finished, and after its purge (the tombstone). */
  databaseBytes: Record<string, number>;
  purgedBytes: Record<string, number>;
}

export async function measureCounts(target: Target): Promise<CountsReport> {
  await call("POST", `${target.url}/__meter/reset`, { expect: [200] });
  const snapshots: Map<string, number>[] = [];
  const snap = async () => snapshots.push(flatten(await readMeter(target)));

  const run = await createRun(target);
  const viewers = Array.from({ length: VIEWERS }, () => openViewer(target, run, () => undefined));
  await within(Promise.all(viewers.map((v) => v.attached)), 30_000, `${VIEWERS} viewers attaching`);
  const runner = await openRunnerSocket(target, run);
  await snap(); // 0: setup
  for (let f = 0; f < FRAMES; f++) {
    const events = Array.from({ length: PER_FRAME }, (_, k) => runnerEvent(f * PER_FRAME + k + 1));
    await runner.sendEvents(events, (f + 1) * PER_FRAME);
  }
  await snap(); // 1: ingest
  const messagesBefore = (await readMeter(target)).classes.RunObject?.webSocketMessages ?? 0;
  for (let h = 0; h < HEARTBEATS; h++) runner.ws.send(JSON.stringify({ type: "heartbeat", epoch: runner.epoch }));
  // Heartbeats have no reply: wait until the object has counted them, then let them finish.
  for (let i = 0; ; i++) {
    const seen = (await readMeter(target)).classes.RunObject?.webSocketMessages ?? 0;
    if (seen >= messagesBefore + HEARTBEATS) break;
    if (i > 100) throw new Error(`the run object did not receive ${HEARTBEATS} heartbeats within 10 s`);
    await sleep(100);
  }
  await sleep(200);
  await snap(); // 2: heartbeats
  await runner.complete();
  await within(Promise.all(viewers.map((v) => v.ended)), 30_000, `${VIEWERS} viewers receiving end`);
  runner.ws.close();
  for (const v of viewers) v.close();
  const headers = { authorization: `Bearer ${BENCH_API_KEY}` };
  await (await call("GET", `${target.url}/v1/runs/${run.runId}`, { headers, expect: [200] })).arrayBuffer();
  await snap(); // 3: finish
  const databaseBytes = Object.fromEntries(
    Object.entries((await readMeter(target)).classes).map(([name, c]) => [name, c.databaseBytes]),
  );
  const late = openViewer(target, run, () => undefined);
  await within(late.ended, 30_000, "a late viewer replaying the whole run");
  late.close();
  await snap(); // 4: late viewer
  await (await call("DELETE", `${target.url}/v1/runs/${run.runId}`, { headers, expect: [200] })).arrayBuffer();
  await snap(); // 5: purge
  const purgedBytes = Object.fromEntries(
    Object.entries((await readMeter(target)).classes).map(([name, c]) => [name, c.databaseBytes]),
  );

  const events = FRAMES * PER_FRAME;
  const columns = [
    `setup: create, ${VIEWERS} viewers attach, claim`,
    `ingest, per event (${FRAMES} frames of ${PER_FRAME})`,
    "per heartbeat",
    `finish: complete, ${VIEWERS} viewers get end`,
    `a late viewer replaying ${events.toLocaleString("en-US")} events, per event`,
    "purge (DELETE; the retention alarm does the same)",
    "whole run (setup to finish)",
  ];
  const divisors = [1, events, HEARTBEATS, 1, events, 1];
  const rows = new Map<string, number[]>();
  const keys = new Set(snapshots.flatMap((s) => [...s.keys()]));
  for (const key of keys) {
    const at = (i: number) => snapshots[i]?.get(key) ?? 0;
    const phases = divisors.map((d, i) => (at(i) - (i === 0 ? 0 : at(i - 1))) / d);
    const values = [...phases, at(3)];
    if (values.some((v) => v !== 0)) rows.set(key, values);
  }
  return { columns, rows, databaseBytes, purgedBytes };
}
