import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { RunEvent, RunRecord } from "../../src/protocol/index.ts";

export const KEY_A = "key-a";
export const KEY_B = "key-b";
export const BASE = "http://edge.test";
export const DAY = 24 * 60 * 60 * 1000;

const worker = (exports as unknown as { default: Fetcher }).default;

export function call(
  path: string,
  init: RequestInit & { key?: string | null; json?: unknown } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  const key = init.key === undefined ? KEY_A : init.key;
  if (key !== null) headers.set("authorization", `Bearer ${key}`);
  let body = init.body ?? null;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set("content-type", "application/json");
  }
  return worker.fetch(`${BASE}${path}`, { ...init, headers, body });
}

export async function json<T = any>(response: Response, status?: number): Promise<T> {
  const text = await response.text();
  if (status !== undefined && response.status !== status) {
    throw new Error(`expected HTTP ${status}, got ${response.status}: ${text}`);
  }
  return JSON.parse(text) as T;
}

let counter = 0;
export function uniqueRunId(prefix = "run"): string {
  counter += 1;
  return `${prefix}-${counter}-${crypto.randomUUID().slice(0, 8)}`;
}

export interface CreatedRun {
  run: RunRecord;
  runnerToken: string;
  runnerTokenId: string;
  viewerToken: string;
  viewerTokenId: string;
}

export async function createRun(body: Record<string, unknown> = {}, key = KEY_A): Promise<CreatedRun> {
  return json<CreatedRun>(
    await call("/v1/runs", { method: "POST", json: { runId: uniqueRunId(), ...body }, key }),
    201,
  );
}

export async function getRun(runId: string, key = KEY_A): Promise<RunRecord> {
  return json<RunRecord>(await call(`/v1/runs/${runId}`, { key }), 200);
}

/** The whole stored log, read through the public paging API. */
export async function allEvents(runId: string, key = KEY_A): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  let after = 0;
  for (;;) {
    const page = await json<{ events: RunEvent[]; nextAfter: number; hasMore: boolean }>(
      await call(`/v1/runs/${runId}/events?after=${after}&limit=500`, { key }),
      200,
    );
    events.push(...page.events);
    after = page.nextAfter;
    if (!page.hasMore) return events;
  }
}

/** Runner events as (sourceSeq, type, data) triples: what a transcript comparison needs. */
export async function runnerTranscript(runId: string): Promise<Array<[number | undefined, string, unknown]>> {
  return (await allEvents(runId)).filter((e) => e.source === "runner").map((e) => [e.sourceSeq, e.type, e.data]);
}

export function expectGapless(events: RunEvent[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
}

export function runObject(runId: string, tenant = "tenant-a") {
  return env.RUNS.get(env.RUNS.idFromName(`${tenant}:${runId}`));
}

/**
 * Moves the run `ms` into the future without ringing its alarm: every stored deadline, and the
 * times of the log's blocks (a due lease or idle deadline is judged against the last runner
 * event's, src/run/alarm.ts), are pulled in by `ms`. That is all of the run's clock in storage,
 * so this is exactly what time passing does.
 */
export async function travel(runId: string, ms: number): Promise<void> {
  await runInDurableObject(runObject(runId), async (_instance, state) => {
    state.storage.sql.exec("UPDATE timers SET due_at = due_at - ?", ms);
    shiftLogTimes(state.storage.sql, ms);
    // Parked in the future so the runtime does not fire it on its own; tests ring it themselves.
    await state.storage.setAlarm(Date.now() + DAY);
  });
}

/** Pulls each log block's entry times in by `ms` (`times`: one number, or one per entry). */
export function shiftLogTimes(sql: SqlStorage, ms: number): void {
  const blocks = sql.exec<{ first_seq: number; times: string }>("SELECT first_seq, times FROM log_blocks").toArray();
  for (const { first_seq, times } of blocks) {
    const parsed = JSON.parse(times) as number | number[];
    const shifted = typeof parsed === "number" ? String(parsed - ms) : JSON.stringify(parsed.map((t) => t - ms));
    sql.exec("UPDATE log_blocks SET times = ? WHERE first_seq = ?", shifted, first_seq);
  }
}

/** Moves the run `ms` into the future, then rings its alarm. */
export async function advance(runId: string, ms: number): Promise<void> {
  await travel(runId, ms);
  if (!(await runDurableObjectAlarm(runObject(runId)))) throw new Error("the run's alarm did not run");
}

/** When the run's `kind` timer is due; throws when it has none. */
export async function timerDue(runId: string, kind: string): Promise<number> {
  const timer = (await timers(runId)).find((t) => t.kind === kind);
  if (!timer) throw new Error(`the run has no ${kind} timer`);
  return timer.due_at;
}

/** One second before the stored lease `due` the alarm finds nothing due; at it, the run stalls. */
export async function expectStallAtLease(runId: string, due: number, epoch: number): Promise<void> {
  await travel(runId, due - Date.now() - 1_000);
  expect(await runDurableObjectAlarm(runObject(runId))).toBe(true);
  expect((await getRun(runId)).status).toBe("running");
  await travel(runId, 1_000);
  expect(await runDurableObjectAlarm(runObject(runId))).toBe(true);
  expect((await getRun(runId)).status).toBe("stalled");
  expect((await allEvents(runId)).at(-1)).toMatchObject({
    type: "run.stalled",
    data: { epoch, reason: "heartbeat lease expired" },
  });
}

export async function timers(runId: string): Promise<Array<{ kind: string; ref: string; due_at: number }>> {
  return runInDurableObject(runObject(runId), (_instance, state) =>
    state.storage.sql
      .exec<{ kind: string; ref: string; due_at: number }>("SELECT kind, ref, due_at FROM timers ORDER BY kind")
      .toArray(),
  );
}
