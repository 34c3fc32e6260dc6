import { describe, expect, it } from "vitest";
import { CLOSE_RECONNECT, type RunEvent } from "../../../src/protocol/index.ts";
import { useDevServer } from "../../support/dev-server.ts";
import { TestRunner } from "../../support/runner-client.ts";
import { waitFor } from "../../support/wait.ts";

// Real sockets: how a viewer that stops acknowledging is closed, and what it receives before the
// close, only shows on a real connection to a real `wrangler dev` (the socket is hibernatable).

const KiB = 1024;
const dev = useDevServer({ VIEWER_BACKLOG_MAX_BYTES: String(512 * KiB), READ_PAGE_MAX_BYTES: String(128 * KiB) });

/** A viewer over a real WebSocket; with `ack` it acknowledges each events frame, as the console does. */
function watch(runId: string, token: string, after: number, ack: boolean) {
  const events: RunEvent[] = [];
  const types: string[] = [];
  const errors: { code: string; message: string }[] = [];
  let closed: { code: number; reason: string } | null = null;
  const url = `${dev.url.replace("http", "ws")}/v1/runs/${runId}/watch?after=${after}&token=${token}`;
  const ws = new WebSocket(url);
  ws.addEventListener("message", (message) => {
    const frame = JSON.parse(String(message.data)) as {
      type: string;
      events?: RunEvent[];
      code?: string;
      message?: string;
    };
    types.push(frame.type);
    if (frame.type === "error") errors.push({ code: String(frame.code), message: String(frame.message) });
    if (!frame.events) return;
    events.push(...frame.events);
    const last = frame.events.at(-1);
    if (ack && last) ws.send(JSON.stringify({ type: "ack", seq: last.seq }));
  });
  ws.addEventListener("close", (event) => {
    closed = { code: event.code, reason: event.reason };
  });
  return { events, types, errors, closed: () => closed };
}

/** A running run whose log is many backlogs long: 60 events of 40 KiB. */
async function longRun() {
  const created = await dev.api.createRun({ timeouts: { heartbeatMs: 600_000 } });
  const runner = await TestRunner.connect(dev.url, created.run.id, created.runnerToken);
  const events = Array.from({ length: 60 }, (_, i) => ({
    type: "TOOL_CALL_RESULT",
    data: { n: i, blob: "z".repeat(40 * KiB) },
  }));
  await runner.send(events, 10);
  return { ...created, runner };
}

describe("slow viewers over a real connection", () => {
  it("a viewer that stops acking is closed with 4008; reconnecting from its last seq completes the transcript", async () => {
    const { run, viewerToken, runner } = await longRun();
    const silent = watch(run.id, viewerToken, 0, false);
    // The replay waits 10 s for an ack, then says why and closes; the close itself may lag.
    const told = await waitFor("the silent viewer's error frame", () => silent.errors.at(0), 20_000, 20);
    expect(told).toMatchObject({ code: "viewer_behind" });
    const closed = await waitFor("the silent viewer's close", silent.closed, 30_000, 20);
    expect(closed.code).toBe(CLOSE_RECONNECT);
    expect(closed.reason).toContain("reconnect");
    expect(silent.events.length).toBeGreaterThan(0);
    expect(silent.events.map((e) => e.seq)).toEqual(silent.events.map((_, i) => i + 1));
    const lastSeq = silent.events.at(-1)?.seq ?? 0;
    const resumed = watch(run.id, viewerToken, lastSeq, true);
    await waitFor("the resumed viewer's status", () => resumed.types.includes("status"), 20_000, 20);
    await runner.complete({ status: "succeeded", exitCode: 0 });
    const end = await waitFor("the resumed viewer's close", resumed.closed, 20_000, 20);
    expect(end.code).toBe(1000);
    expect([...silent.events, ...resumed.events]).toEqual(await dev.api.events(run.id));
  });

  it("a viewer that acks reads a log many backlogs long on one connection", async () => {
    const { run, viewerToken, runner } = await longRun();
    const steady = watch(run.id, viewerToken, 0, true);
    await waitFor("the steady viewer's status", () => steady.types.includes("status"), 30_000, 20);
    await runner.complete({ status: "succeeded", exitCode: 0 });
    expect(await waitFor("the steady viewer's close", steady.closed, 20_000, 20)).toMatchObject({ code: 1000 });
    expect(steady.events).toEqual(await dev.api.events(run.id));
    expect(steady.types.filter((type) => type === "events").length).toBeGreaterThan(10);
  });
});
