import { afterEach, describe, expect, it } from "vitest";
import { useEdge } from "./harness/context.ts";
import { textLine } from "./harness/ndjson-events.ts";
import { startProxy, type TestProxy } from "../support/proxy.ts";

// --linger-ms: a burst of lines written over a few hundred milliseconds goes out in fewer `events`
// frames (the edge acks each frame once, so acks crossing a proxy count the frames) and the stored
// transcript is the same, event for event.

const t = useEdge();
let proxy: TestProxy | null = null;
afterEach(async () => {
  await proxy?.close();
  proxy = null;
});

const LINES = 150;

/** Runs the burst agent with `extra` flags; the frames the edge acked and the stored transcript. */
async function burst(extra: string[]) {
  let acks = 0;
  const ack = Buffer.from('"type":"ack"');
  proxy = await startProxy(t.edge.port, {
    onServerData(_connection, chunk) {
      for (let at = chunk.indexOf(ack); at >= 0; at = chunk.indexOf(ack, at + 1)) acks++;
    },
  });
  // One line a millisecond or so (a fast agent), then a pause longer than any linger before exiting,
  // so the last frame goes out by the linger, not by the exit.
  const steps: unknown[] = [];
  for (let i = 1; i <= LINES; i++) steps.push({ out: `line ${i}` }, { sleepMs: 1 });
  steps.push({ sleepMs: 1500 });
  const { run, bridge } = await t.startRun({ edgeUrl: proxy.url, agent: t.agent(steps), extra });
  expect(await bridge.waitExit()).toBe(0);
  const transcript = await t.api.runnerEvents(run.id);
  await proxy.close();
  proxy = null;
  return { acks, transcript };
}

describe("linger", () => {
  it("a burst goes out in fewer frames with --linger-ms, and the transcript is unchanged", async () => {
    const expected = Array.from({ length: LINES }, (_, i) => textLine(i + 1, `line ${i + 1}`, 1));
    const plain = await burst(["--linger-ms", "0"]);
    const lingered = await burst(["--linger-ms", "500"]);
    expect(plain.transcript).toEqual(expected);
    expect(lingered.transcript).toEqual(expected);
    // At least 150 ms of lines against a 25 ms pump: several frames with no linger.
    expect(plain.acks, "frames acked with --linger-ms 0").toBeGreaterThan(2);
    expect(lingered.acks, `frames acked with a 500 ms linger (with 0: ${plain.acks})`).toBeLessThan(plain.acks);
  }, 90_000);
});
