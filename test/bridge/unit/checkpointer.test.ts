import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeArchive, digestOf } from "../../../runner-bridge/src/checkpoint/archive.ts";
import { type CheckpointUpload, EdgeRefusal } from "../../../runner-bridge/src/checkpoint/edge-api.ts";
import { sessionPlaces } from "../../../runner-bridge/src/checkpoint/files.ts";
import { Checkpointer } from "../../../runner-bridge/src/checkpoint/uploader.ts";
import type { Logger } from "../../../runner-bridge/src/logger.ts";
import { waitFor } from "../../support/wait.ts";
import { tempDir } from "../harness/bridge.ts";

/**
 * The uploader's rules, on real files: what a snapshot covers, that it waits for the edge's ack,
 * that an unchanged snapshot is not sent again, and that failures are logged, not fatal. The
 * upload itself is recorded here; the bridge tests send it to a real edge.
 */
function setup(o: { fail?: (up: CheckpointUpload) => Error | null } = {}) {
  const dir = tempDir("ndjson-agent-");
  const own = path.join(dir, "state.json");
  const host = {
    lines: 0,
    acked: 0,
    claim: { epoch: 1, generation: 1 } as { epoch: number; generation: number } | null,
  };
  const uploads: CheckpointUpload[] = [];
  const warnings: string[] = [];
  const log: Logger = { info() {}, warn: (m) => warnings.push(m), redact() {}, scrub: (t) => t, secrets: () => [] };
  const checkpointer = new Checkpointer(
    {
      places: sessionPlaces("ndjson", {}, dir, own),
      intervalMs: 60_000,
      retryBaseMs: 5,
      log,
      async upload(up) {
        const failure = o.fail?.(up);
        if (failure) throw failure;
        uploads.push(up);
      },
    },
    { linesRead: () => host.lines, acked: () => host.acked, claim: () => host.claim },
  );
  /** Lets the checkpointer's pending upload run. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  return { own, host, uploads, warnings, checkpointer, settle };
}

const turnEnd = (c: Checkpointer) => c.observe("RUN_FINISHED", { threadId: "s", runId: "t" });

describe("the checkpoint uploader", () => {
  it("has nothing to upload before the agent reports its session", async () => {
    const { own, host, uploads, checkpointer, settle } = setup();
    fs.writeFileSync(own, "state");
    host.lines = host.acked = 2;
    turnEnd(checkpointer);
    checkpointer.tick();
    await settle();
    expect(uploads).toEqual([]);
  });

  it("covers the lines read before the files, and waits until the edge acknowledged them", async () => {
    const { own, host, uploads, checkpointer, settle } = setup();
    checkpointer.observe("agent.session", { provider: "mine", id: "s-1" });
    fs.writeFileSync(own, "after turn 1");
    host.lines = 3;
    host.acked = 2;
    turnEnd(checkpointer);
    checkpointer.tick();
    await settle();
    expect(uploads).toEqual([]);
    host.claim = null;
    host.acked = 3;
    checkpointer.tick();
    await settle();
    expect(uploads).toEqual([]); // not claimed: nothing to upload under
    host.claim = { epoch: 4, generation: 2 };
    checkpointer.tick();
    await settle();
    expect(uploads.map(({ bytes, ...rest }) => rest)).toEqual([
      { epoch: 4, generation: 2, sourceSeq: 3, digest: digestOf(uploads[0]?.bytes as Buffer) },
    ]);
    expect(decodeArchive(uploads[0]?.bytes as Buffer)).toEqual({
      provider: "mine",
      session: "s-1",
      files: [{ root: "checkpoint", path: "", data: Buffer.from("after turn 1") }],
    });
  });

  it("sends nothing new for the same files and events; the same files covering more events go again", async () => {
    const { own, host, uploads, checkpointer, settle } = setup();
    checkpointer.observe("agent.session", { provider: "mine", id: "s-1" });
    fs.writeFileSync(own, "v1");
    host.lines = host.acked = 2;
    const snapshot = async () => {
      turnEnd(checkpointer);
      checkpointer.tick();
      await settle();
    };
    await snapshot();
    await snapshot();
    expect(uploads.map((u) => u.sourceSeq)).toEqual([2]);
    host.lines = host.acked = 5;
    await snapshot();
    fs.writeFileSync(own, "v2");
    await snapshot();
    expect(uploads.map((u) => [u.sourceSeq, u.digest === uploads[0]?.digest])).toEqual([
      [2, true],
      [5, true],
      [5, false],
    ]);
  });

  it("logs a refusal and goes on; retries one that never reached the edge", async () => {
    let attempts = 0;
    const { own, host, uploads, warnings, checkpointer, settle } = setup({
      fail: (up) => {
        attempts++;
        if (up.sourceSeq === 1) return new EdgeRefusal("checkpoint_too_large", "over 10 bytes", 413);
        return attempts < 3 ? new Error("fetch failed") : null;
      },
    });
    checkpointer.observe("agent.session", { provider: "mine", id: "s-1" });
    fs.writeFileSync(own, "too big");
    host.lines = host.acked = 1;
    turnEnd(checkpointer);
    checkpointer.tick();
    await settle();
    expect(warnings).toEqual(["checkpoint upload failed: 413 checkpoint_too_large: over 10 bytes"]);
    turnEnd(checkpointer);
    checkpointer.tick();
    await settle();
    expect(attempts).toBe(1); // the refused snapshot is not offered again
    fs.writeFileSync(own, "small");
    host.lines = host.acked = 2;
    turnEnd(checkpointer);
    checkpointer.tick();
    await waitFor("the retried upload to go through", () => uploads.length === 1, 5000);
    expect(uploads.map((u) => u.sourceSeq)).toEqual([2]);
    expect(warnings.slice(1)).toEqual(["checkpoint upload failed (will retry): fetch failed"]);
    checkpointer.stop();
  });

  it("gives a snapshot that never reaches the edge up after 5 attempts; the next turn offers a fresh one", async () => {
    let attempts = 0;
    const { own, host, warnings, checkpointer, settle } = setup({
      fail: () => {
        attempts++;
        return new Error("fetch failed");
      },
    });
    checkpointer.observe("agent.session", { provider: "mine", id: "s-1" });
    fs.writeFileSync(own, "state");
    host.lines = host.acked = 1;
    turnEnd(checkpointer);
    checkpointer.tick();
    await waitFor("five attempts", () => attempts === 5, 5000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(attempts).toBe(5);
    expect(warnings.at(-1)).toBe("checkpoint upload failed: fetch failed");
    expect(warnings.filter((w) => w.includes("will retry"))).toHaveLength(4);
    turnEnd(checkpointer);
    checkpointer.tick();
    await settle();
    expect(attempts).toBeGreaterThan(5);
    checkpointer.stop();
  });
});
