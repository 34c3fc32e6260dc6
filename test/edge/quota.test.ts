import { describe, expect, it } from "vitest";
import { CLOSE_REJECTED, CLOSE_TRY_AGAIN } from "../../src/protocol/index.ts";
import { allEvents, createRun, getRun } from "./helpers.ts";
import { EDGE_LIMITS } from "./limits.ts";
import { agentEvent, claim, connectRunner, watch } from "./sockets.ts";

const KiB = 1024;
const bigEvent = (sourceSeq: number) =>
  agentEvent(sourceSeq, "TOOL_CALL_RESULT", { content: `${sourceSeq}:${"x".repeat(900 * KiB)}` });
const logBytes = (events: unknown[]) => events.reduce<number>((sum, e) => sum + JSON.stringify(e).length, 0);

describe("per-run storage quota", () => {
  it("a batch that would pass RUN_LOG_MAX_BYTES is not stored; the run fails quota_exceeded at once", async () => {
    const { run, runnerToken, viewerToken } = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    const viewer = await watch(run.id, viewerToken, 0);
    viewer.ws.addEventListener("message", (event) => {
      const last = (JSON.parse(String(event.data)) as { events?: { seq: number }[] }).events?.at(-1);
      if (last) viewer.send({ type: "ack", seq: last.seq });
    });
    let stored = 0;
    for (let n = 1; n <= 20; n++) {
      runner.send({ type: "events", epoch, events: [bigEvent(n)] });
      const answer = await runner.next(["ack", "error"]);
      if (answer.type === "error") {
        expect(answer).toMatchObject({ code: "quota_exceeded" });
        break;
      }
      stored = answer.highestSourceSeq;
    }
    expect(await runner.next("rejected")).toMatchObject({ reason: "terminal-run", status: "failed" });
    expect((await runner.waitClosed()).code).toBe(CLOSE_REJECTED);
    const finished = await getRun(run.id);
    expect(finished).toMatchObject({
      status: "failed",
      outcome: { status: "failed", error: { code: "quota_exceeded" } },
    });
    const events = await allEvents(run.id);
    expect(events.filter((e) => e.source === "runner").map((e) => e.sourceSeq)).toEqual(
      Array.from({ length: stored }, (_, i) => i + 1),
    );
    expect(stored).toBeGreaterThan(0);
    expect(events.at(-1)?.type).toBe("run.finished");
    // Everything but the object's own closing report fits the quota.
    expect(logBytes(events.slice(0, -1))).toBeLessThanOrEqual(EDGE_LIMITS.logBytes);
    expect(await viewer.next("end", () => true, 15_000)).toEqual({ type: "end", status: "failed" });
  }, 20_000);
});

describe("per-run storage quota in UTF-8 bytes", () => {
  it("counts multibyte text by its bytes: a batch that fits in UTF-16 units but not in bytes is refused", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const { runner, epoch } = await claim(run.id, runnerToken);
    const utf8 = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
    const send = async (events: unknown[]) => {
      runner.send({ type: "events", epoch, events });
      return runner.next(["ack", "error"]);
    };
    // ASCII filler up to about 640 KB below the quota.
    const fillers = [...Array.from({ length: 7 }, () => 1_000_000), 750_000];
    for (const [index, size] of fillers.entries()) {
      const answer = await send([agentEvent(index + 1, "TOOL_CALL_RESULT", { content: "x".repeat(size) })]);
      expect(answer).toMatchObject({ type: "ack", highestSourceSeq: index + 1 });
    }
    const before = await allEvents(run.id);
    const room = EDGE_LIMITS.logBytes - before.reduce<number>((sum, e) => sum + utf8(e), 0);
    // About 307 K UTF-16 units, 921 KB of UTF-8 ("€" is 3 bytes): fits the room by units, not by bytes.
    const euro = agentEvent(fillers.length + 1, "TOOL_CALL_RESULT", { content: "€".repeat(300 * KiB) });
    expect(JSON.stringify(euro).length + 300).toBeLessThan(room);
    expect(utf8(euro)).toBeGreaterThan(room);
    expect(await send([euro])).toMatchObject({ type: "error", code: "quota_exceeded" });
    const after = await allEvents(run.id);
    expect(after.filter((e) => e.source === "runner")).toHaveLength(fillers.length);
    expect(await getRun(run.id)).toMatchObject({ status: "failed", outcome: { error: { code: "quota_exceeded" } } });
  }, 30_000);
});

describe("claim-rate bound", () => {
  it("past CLAIMS_PER_MINUTE a hello is refused rate_limited and closed 1013; the holder keeps the run", async () => {
    const { run, runnerToken } = await createRun({ timeouts: { heartbeatMs: 600_000 } });
    const looping = await connectRunner(run.id, runnerToken);
    let epoch = 0;
    for (let i = 0; i < EDGE_LIMITS.claimsPerMinute; i++) {
      looping.send({ type: "hello", runnerId: "looping" });
      epoch = (await looping.next("claimed")).epoch;
    }
    expect(epoch).toBe(EDGE_LIMITS.claimsPerMinute);
    const extra = await connectRunner(run.id, runnerToken);
    extra.send({ type: "hello", runnerId: "another" });
    expect(await extra.next("error")).toMatchObject({ code: "rate_limited" });
    expect((await extra.waitClosed()).code).toBe(CLOSE_TRY_AGAIN);
    looping.send({ type: "events", epoch, events: [agentEvent(1)] });
    expect(await looping.next("ack")).toEqual({ type: "ack", highestSourceSeq: 1 });
    const claims = (await allEvents(run.id)).filter((e) => e.type === "run.claimed");
    expect(claims).toHaveLength(EDGE_LIMITS.claimsPerMinute);
    expect(await getRun(run.id)).toMatchObject({
      status: "running",
      epoch,
      runner: { id: "looping", connected: true },
    });
  });
});
