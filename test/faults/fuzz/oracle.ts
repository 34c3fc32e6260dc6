import { env } from "cloudflare:test";
import fc from "fast-check";
import { ERROR_STATUS, type ErrorCode } from "../../../src/protocol/index.ts";
import { call, KEY_A } from "../../edge/helpers.ts";
import { reportFigures } from "../support/figures.ts";

/**
 * What every fuzzed input is held to: no answer ≥ 500, no error frame `internal`, every refusal
 * `{error: {code, message}}` with a code of src/protocol/errors.ts and the status it maps to, and a
 * refused input leaves the run's stored log and record as they were.
 */

/** FAULT_SEED (passed in as a binding by vitest.config.ts) or a fresh seed; printed either way. */
export function fuzzSeed(surface: string): number {
  const given = (env as unknown as { FAULT_SEED?: string }).FAULT_SEED;
  const seed = given ? Number(given) >>> 0 : Math.floor(Math.random() * 2 ** 32) >>> 0;
  console.log(`[faults] fuzzing ${surface}: FAULT_SEED=${seed}${given ? " (from the environment)" : ""}`);
  return seed;
}

/** Runs a property `numRuns` times from `seed`; a failure names the seed that replays it. */
export async function fuzz<T>(
  seed: number,
  numRuns: number,
  input: fc.Arbitrary<T>,
  check: (value: T) => Promise<void>,
): Promise<void> {
  try {
    // No shrinking: the fuzzed objects keep state between inputs, so a shrunk input means nothing.
    await fc.assert(fc.asyncProperty(input, check), { seed, numRuns, endOnFailure: true });
  } catch (error) {
    if (error instanceof Error)
      error.message = `[FAULT_SEED=${seed}; replay: FAULT_SEED=${seed} npx vitest run --project fuzz] ${error.message}`;
    throw error;
  }
}

/** What one suite saw, printed at its end for docs/RELIABILITY.md. */
export class FuzzTally {
  inputs = 0;
  refused = 0;
  accepted = 0;
  serverErrors = 0;
  internalFrames = 0;
  readonly codes = new Map<string, number>();

  refusal(code: string): void {
    this.codes.set(code, (this.codes.get(code) ?? 0) + 1);
  }

  report(surface: string, seed: number): void {
    const codes = [...this.codes.entries()].sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`);
    reportFigures(`fuzzing ${surface}`, seed, {
      "inputs fuzzed": this.inputs,
      refused: this.refused,
      accepted: this.accepted,
      "responses ≥ 500": this.serverErrors,
      "internal error frames": this.internalFrames,
      "refusal codes": codes.join(", "),
    });
  }
}

const KNOWN = new Set(Object.keys(ERROR_STATUS));

/** An error body or frame's `{code, message}` is one the table knows. */
export function checkError(error: unknown, what: string): ErrorCode {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  if (!e || typeof e.code !== "string" || !KNOWN.has(e.code) || typeof e.message !== "string" || e.message === "") {
    throw new Error(`${what}: not a documented error: ${JSON.stringify(error)?.slice(0, 300)}`);
  }
  return e.code as ErrorCode;
}

/**
 * Judges one HTTP answer and tallies it; true when it was a refusal. A WebSocket it opened is
 * closed, a stream body it started is cancelled.
 */
export async function judgeResponse(
  response: Response,
  method: string,
  what: string,
  tally: FuzzTally,
): Promise<boolean> {
  if (response.webSocket) {
    response.webSocket.accept();
    response.webSocket.close(1000, "fuzz");
  }
  if (response.status >= 500) {
    tally.serverErrors++;
    throw new Error(`${what}: answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  if (response.status < 400) {
    tally.accepted++;
    await response.body?.cancel();
    return false;
  }
  tally.refused++;
  if (method === "HEAD") {
    await response.body?.cancel();
    tally.refusal(`HEAD ${response.status}`);
    return true;
  }
  const text = await response.text();
  let body: { error?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${what}: ${response.status} with a body that is not JSON: ${text.slice(0, 300)}`);
  }
  const code = checkError(body.error, `${what} (${response.status})`);
  if (ERROR_STATUS[code] !== response.status) {
    throw new Error(`${what}: ${code} answered with ${response.status}, the table says ${ERROR_STATUS[code]}`);
  }
  tally.refusal(code);
  return true;
}

/**
 * A run as stored, read through the API with its tenant's key: its record and its whole log, as the
 * text the API answers (so a 404 or 410 compares too). `runner.connected` is left out: it says
 * whether a socket is open now, which a refused frame may change (a fenced socket is closed) while
 * nothing is stored.
 */
export async function storedRun(runId: string, key = KEY_A): Promise<{ record: unknown; log: string }> {
  const run = `/v1/runs/${encodeURIComponent(runId)}`;
  const record = await (await call(run, { key })).json();
  const runner = (record as { runner?: { connected?: boolean } | null }).runner;
  if (runner) delete runner.connected;
  let log = "";
  for (let after = 0; ; ) {
    const page = await call(`${run}/events?after=${after}&limit=500`, { key });
    const text = await page.text();
    log += text;
    const parsed = page.ok ? (JSON.parse(text) as { hasMore: boolean; nextAfter: number }) : null;
    if (!parsed?.hasMore) return { record, log };
    after = parsed.nextAfter;
  }
}

type Stored = { record: unknown; log: string };

/**
 * Throws when what is stored under `id` (a run, or what `read` reads) differs from `before`;
 * returns it otherwise.
 */
export async function expectUnchanged(
  id: string,
  before: Stored,
  what: string,
  key = KEY_A,
  read: () => Promise<Stored> = () => storedRun(id, key),
): Promise<Stored> {
  const after = await read();
  if (JSON.stringify(after.record) !== JSON.stringify(before.record) || after.log !== before.log) {
    throw new Error(
      `${what}: a refused input changed ${id}:\nbefore ${JSON.stringify(before).slice(0, 600)}\nafter  ${JSON.stringify(after).slice(0, 600)}`,
    );
  }
  return after;
}
