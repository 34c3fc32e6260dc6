import fs from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import type { RunEvent } from "../../../src/protocol/index.ts";
import { NODE, tempDir } from "../../bridge/harness/bridge.ts";
import type { Api } from "../../support/api.ts";
import type { ReconnectingViewer } from "./viewer.ts";

const AGENT = path.join(import.meta.dirname, "../fixtures/stream-agent.mjs");

export interface AgentSegment {
  lines: number;
  everyMs: number;
  gate?: string;
}

/** The fault suites' agent (fixtures/stream-agent.mjs) and the files where it records itself. */
export interface StreamAgent {
  command: string[];
  /** Every line the agent printed, in order. */
  record: string;
  /** Every stdin line the agent received, in order. */
  received: string;
}

export function streamAgent(config: {
  segments: AgentSegment[];
  approvalsAt?: number[];
  /** Stdin lines to wait for before exiting, and how long to go on listening after the last. */
  expectStdin?: number;
  graceMs?: number;
}): StreamAgent {
  const dir = tempDir("fault-agent-");
  const record = path.join(dir, "printed.ndjson");
  const received = path.join(dir, "received.ndjson");
  fs.writeFileSync(record, "");
  fs.writeFileSync(received, "");
  const file = path.join(dir, "config.json");
  fs.writeFileSync(file, JSON.stringify({ ...config, record, received }));
  return { command: [NODE, AGENT, file], record, received };
}

function lines(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}

export type TranscriptEvent = { sourceSeq: number | undefined; type: string; data: unknown };

/** Typed lines the ndjson adapter passes through as they are (the fixture prints no AG-UI type). */
const PASSED_THROUGH = new Set(["approval.requested", "agent.session"]);

/**
 * What the agent printed, as the events the ndjson adapter must make of it (docs/ADAPTERS.md): a
 * JSON object with a string `type` is passed through or becomes CUSTOM `{name: type, value: the
 * other fields}`; any other line is a TEXT_MESSAGE_CHUNK of the assistant message its run of text
 * lines forms, named after that run's first line. Written here from the documented rules, not
 * with the adapter's code, so the comparison checks the adapter too.
 */
export function printedTranscript(agent: StreamAgent): TranscriptEvent[] {
  let textSince = 0;
  return lines(agent.record).map((line, i): TranscriptEvent => {
    const sourceSeq = i + 1;
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(line);
    } catch {}
    const type = (parsed as { type?: unknown } | null)?.type;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && typeof type === "string" && type !== "") {
      textSince = 0;
      const { type: _type, ...data } = parsed as { type: string };
      if (PASSED_THROUGH.has(type)) return { sourceSeq, type, data };
      return { sourceSeq, type: "CUSTOM", data: { name: type, value: data } };
    }
    if (textSince === 0) textSince = sourceSeq;
    return {
      sourceSeq,
      type: "TEXT_MESSAGE_CHUNK",
      data: { messageId: `line-${textSince}`, role: "assistant", delta: `${line}\n` },
    };
  });
}

/** The stdin lines the agent received, parsed. */
export function receivedByAgent(agent: StreamAgent): Array<{ type: string; commandId: string; [k: string]: unknown }> {
  return lines(agent.received).map((line) => JSON.parse(line));
}

export function runnerTranscript(events: RunEvent[]): TranscriptEvent[] {
  return events
    .filter((e) => e.source === "runner")
    .map((e) => ({ sourceSeq: e.sourceSeq, type: e.type, data: e.data }));
}

/** seq runs 1..n with no gap and no repeat. */
export function expectGapless(events: RunEvent[], what = "the stored log"): void {
  const bad = events.findIndex((e, i) => e.seq !== i + 1);
  expect(bad, `${what}: seq ${events[bad]?.seq} at position ${bad + 1}`).toBe(-1);
}

/**
 * Claims only ever move the epoch forward by one, each from the epoch before it, and every event
 * carries the epoch current when it was stored.
 */
export function expectEpochChain(events: RunEvent[]): void {
  let epoch = 0;
  for (const event of events) {
    if (event.type === "run.claimed") {
      const data = event.data as { epoch: number; previousEpoch: number };
      expect({ seq: event.seq, epoch: data.epoch, previousEpoch: data.previousEpoch }).toEqual({
        seq: event.seq,
        epoch: epoch + 1,
        previousEpoch: epoch,
      });
      epoch = data.epoch;
    }
    expect(event.epoch, `epoch of event seq ${event.seq} (${event.type})`).toBe(epoch);
  }
}

/** A viewer saw exactly the stored log: every event once, in order, and the run's end. */
export function expectViewerSawLog(viewer: ReconnectingViewer, log: RunEvent[], status: string): void {
  expect(viewer.anomalies, `viewer ${viewer.name}: duplicates, gaps or error frames`).toEqual([]);
  expect(viewer.received.length, `viewer ${viewer.name}: events received`).toBe(log.length);
  expect(viewer.received, `viewer ${viewer.name}: transcript`).toEqual(log);
  expect(viewer.ended).toBe(status);
}

/**
 * The fault suites' verdict on a run that should have come through whole: it succeeded, its log
 * holds exactly what the agent printed, gapless and with its epochs chained, and every viewer saw
 * all of it. Returns the log.
 */
export async function expectExactRun(
  api: Api,
  runId: string,
  agent: StreamAgent,
  viewers: ReconnectingViewer[],
): Promise<RunEvent[]> {
  const log = await api.events(runId);
  expect((await api.getRun(runId)).status).toBe("succeeded");
  expect(runnerTranscript(log)).toEqual(printedTranscript(agent));
  expectGapless(log);
  expectEpochChain(log);
  for (const viewer of viewers) expectViewerSawLog(viewer, log, "succeeded");
  return log;
}
