import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CHECKPOINT_MAX_BYTES_DEFAULT } from "../../src/protocol/index.ts";
import { checkpointLimit } from "../../src/routes/checkpoint.ts";
import { allEvents, call, getRun, json, runObject } from "./helpers.ts";
import { lose, patterned, putCheckpoint, runWith, session, sha256 } from "./recovery-helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

const MiB = 1024 * 1024;
const LIMIT = 4 * MiB; // CHECKPOINT_MAX_BYTES of the edge project (vitest.config.ts)

async function download(runId: string, token: string) {
  const response = await call(`/v1/runs/${runId}/checkpoint`, { key: token });
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** What the run's SQLite holds of checkpoints: chunk rows by upload, unfinished uploads. */
async function stored(runId: string) {
  return runInDurableObject(runObject(runId), (_instance, state) => ({
    chunks: state.storage.sql
      .exec<{ upload_id: string; idx: number; size: number }>(
        "SELECT upload_id, idx, length(body) AS size FROM checkpoint_chunks ORDER BY upload_id, idx",
      )
      .toArray(),
    uploads: state.storage.sql.exec("SELECT upload_id FROM checkpoint_uploads").toArray().length,
  }));
}

/** A body sent as a stream with no Content-Length; `cut` fails it half-way, as a dropped connection would. */
function streamed(bytes: Uint8Array, cut = false): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (cut && at >= bytes.byteLength / 2) {
        controller.error(new Error("connection reset"));
        return;
      }
      if (at >= bytes.byteLength) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(at, at + 256 * 1024));
      at += 256 * 1024;
    },
  });
}

/** Byte for byte, reporting the first difference (toEqual on megabytes is slow). */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.byteLength).toBe(expected.byteLength);
  const differs = actual.findIndex((byte, index) => byte !== expected[index]);
  expect(differs, `first differing byte at ${differs}`).toBe(-1);
}

const checkpointEvents = async (runId: string) =>
  (await allEvents(runId)).filter((event) => event.type === "run.checkpoint").map((event) => event.data);

describe("checkpoint uploads", () => {
  it("a new checkpoint is stored (201) with an event; the same digest again is 200 and only moves sourceSeq up", async () => {
    const live = await runWith([session(1), agentEvent(2), agentEvent(3)]);
    const body = patterned(5000);
    const digest = await sha256(body);
    const first = await json(
      await putCheckpoint(live.runId, live.runnerToken, { epoch: live.epoch, generation: 1, sourceSeq: 2, body }),
      201,
    );
    expect(first.checkpoint).toMatchObject({ digest, generation: 1, sourceSeq: 2, bytes: 5000 });
    const again = { epoch: live.epoch, generation: 1, body };
    const higher = await json(await putCheckpoint(live.runId, live.runnerToken, { ...again, sourceSeq: 3 }), 200);
    expect(higher.checkpoint).toMatchObject({ digest, sourceSeq: 3, createdAt: first.checkpoint.createdAt });
    const lower = await json(await putCheckpoint(live.runId, live.runnerToken, { ...again, sourceSeq: 1 }), 200);
    expect(lower.checkpoint.sourceSeq).toBe(3);
    expect((await getRun(live.runId)).checkpoint).toEqual(lower.checkpoint);
    expect(await checkpointEvents(live.runId)).toEqual([{ digest, generation: 1, sourceSeq: 2, bytes: 5000 }]);
  });

  it("a body over 1 MiB is stored in chunks of at most 1 MiB and comes back byte for byte", async () => {
    const live = await runWith([session(1)]);
    const body = patterned(2 * MiB + 12345, 3);
    const upload = { epoch: live.epoch, generation: 1, sourceSeq: 1, body };
    await json(await putCheckpoint(live.runId, live.runnerToken, upload), 201);
    const rows = (await stored(live.runId)).chunks;
    expect(rows.map((row) => [row.idx, row.size])).toEqual([
      [0, MiB],
      [1, MiB],
      [2, 12345],
    ]);
    const { response, bytes } = await download(live.runId, live.runnerToken);
    expect(response.status).toBe(200);
    expect(response.headers.get("checkpoint-digest")).toBe(await sha256(body));
    expect(response.headers.get("checkpoint-generation")).toBe("1");
    expect(response.headers.get("checkpoint-source-seq")).toBe("1");
    expectSameBytes(bytes, body);
  });

  it("a streamed body (no Content-Length) is read as it arrives and stored whole", async () => {
    const live = await runWith([session(1)]);
    const body = patterned(MiB + 1, 9);
    const digest = await sha256(body);
    const response = await call(
      `/v1/runs/${live.runId}/checkpoint?epoch=${live.epoch}&generation=1&sourceSeq=1&digest=${digest}`,
      { method: "PUT", key: live.runnerToken, body: streamed(body), duplex: "half" } as RequestInit,
    );
    expect(response.status).toBe(201);
    expectSameBytes((await download(live.runId, live.runnerToken)).bytes, body);
  });

  it("a new checkpoint replaces the previous one whole: its chunks are gone", async () => {
    const live = await runWith([session(1), agentEvent(2)]);
    const base = { epoch: live.epoch, generation: 1 };
    await json(
      await putCheckpoint(live.runId, live.runnerToken, { ...base, sourceSeq: 1, body: patterned(MiB + 5) }),
      201,
    );
    const next = patterned(100, 1);
    await json(await putCheckpoint(live.runId, live.runnerToken, { ...base, sourceSeq: 2, body: next }), 201);
    expect((await stored(live.runId)).chunks.map((row) => row.size)).toEqual([100]);
    expect((await download(live.runId, live.runnerToken)).bytes).toEqual(next);
  });

  describe("refusals store nothing and leave the previous checkpoint intact", () => {
    async function withCheckpoint() {
      const live = await runWith([session(1), agentEvent(2)]);
      const kept = patterned(MiB + 7, 5);
      await json(
        await putCheckpoint(live.runId, live.runnerToken, {
          epoch: live.epoch,
          generation: 1,
          sourceSeq: 1,
          body: kept,
        }),
        201,
      );
      const before = {
        run: await getRun(live.runId),
        events: await allEvents(live.runId),
        rows: await stored(live.runId),
      };
      const unchanged = async () => {
        expect(await getRun(live.runId)).toEqual(before.run);
        expect(await allEvents(live.runId)).toEqual(before.events);
        expect(await stored(live.runId)).toEqual(before.rows);
        expectSameBytes((await download(live.runId, live.runnerToken)).bytes, kept);
      };
      return { live, unchanged };
    }

    it("413 checkpoint_too_large for a declared size over the limit, naming it", async () => {
      const { live, unchanged } = await withCheckpoint();
      const body = patterned(LIMIT + 1);
      const answer = await json(
        await putCheckpoint(live.runId, live.runnerToken, { epoch: live.epoch, generation: 1, sourceSeq: 2, body }),
        413,
      );
      expect(answer.error).toEqual({
        code: "checkpoint_too_large",
        message: `checkpoints are limited to ${LIMIT} bytes`,
      });
      await unchanged();
    });

    it("413 for a streamed body that passes the limit part-way, with the chunks sent so far dropped", async () => {
      const { live, unchanged } = await withCheckpoint();
      const body = patterned(LIMIT + 300 * 1024, 2);
      const response = await call(
        `/v1/runs/${live.runId}/checkpoint?epoch=${live.epoch}&generation=1&sourceSeq=2&digest=${await sha256(body)}`,
        { method: "PUT", key: live.runnerToken, body: streamed(body), duplex: "half" } as RequestInit,
      );
      expect((await json(response, 413)).error.code).toBe("checkpoint_too_large");
      await unchanged();
    });

    it("400 digest_mismatch when the bytes are not the digest's", async () => {
      const { live, unchanged } = await withCheckpoint();
      const upload = { epoch: live.epoch, generation: 1, sourceSeq: 2, body: patterned(MiB + 9, 8) };
      const wrong = await sha256(patterned(10));
      const answer = await json(await putCheckpoint(live.runId, live.runnerToken, { ...upload, digest: wrong }), 400);
      expect(answer.error.code).toBe("digest_mismatch");
      await unchanged();
    });

    it("an upload cut off mid-way stores nothing", async () => {
      const { live, unchanged } = await withCheckpoint();
      const body = patterned(2 * MiB, 4);
      const response = await call(
        `/v1/runs/${live.runId}/checkpoint?epoch=${live.epoch}&generation=1&sourceSeq=2&digest=${await sha256(body)}`,
        { method: "PUT", key: live.runnerToken, body: streamed(body, true), duplex: "half" } as RequestInit,
      );
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      await unchanged();
    });

    it("409 fenced for an epoch that is not the current claim, or another generation", async () => {
      const { live, unchanged } = await withCheckpoint();
      const body = patterned(10);
      const put = (epoch: number, generation: number) =>
        putCheckpoint(live.runId, live.runnerToken, { epoch, generation, sourceSeq: 1, body });
      expect((await json(await put(live.epoch + 1, 1), 409)).error.code).toBe("fenced");
      expect((await json(await put(live.epoch, 2), 409)).error.code).toBe("fenced");
      await unchanged();
    });

    it("409 checkpoint_ahead for a sourceSeq past the stored events", async () => {
      const { live, unchanged } = await withCheckpoint();
      const upload = { epoch: live.epoch, generation: 1, sourceSeq: 3, body: patterned(10) };
      const answer = await json(await putCheckpoint(live.runId, live.runnerToken, upload), 409);
      expect(answer.error).toEqual({
        code: "checkpoint_ahead",
        message: "the checkpoint claims sourceSeq 3, but only 2 of generation 1 are stored",
      });
      await unchanged();
    });
  });

  it("a superseded claim's upload is fenced, and so is any while the run is recovering", async () => {
    const live = await runWith([session(1)]);
    const successor = await claim(live.runId, live.runnerToken, "successor");
    const body = patterned(10);
    const old = await putCheckpoint(live.runId, live.runnerToken, {
      epoch: live.epoch,
      generation: 1,
      sourceSeq: 1,
      body,
    });
    // The same verdict the socket gives a superseded runner (`fenced {epoch}`): the current epoch.
    expect(await json(old, 409)).toEqual({
      error: {
        code: "fenced",
        message: `epoch ${live.epoch} does not hold the run (the current claim is epoch ${successor.epoch})`,
      },
      epoch: successor.epoch,
    });
    successor.runner.close();
    await lose(live.runId);
    const upload = { epoch: successor.epoch, generation: 1, sourceSeq: 1, body };
    expect((await json(await putCheckpoint(live.runId, live.runnerToken, upload), 409)).error.code).toBe("fenced");
    expect((await getRun(live.runId)).checkpoint).toBeNull();
  });

  it("only the runner token reaches checkpoints; a bad query is 400; none stored is 404 no_checkpoint", async () => {
    const live = await runWith([]);
    const none = await call(`/v1/runs/${live.runId}/checkpoint`, { key: live.runnerToken });
    expect((await json(none, 404)).error.code).toBe("no_checkpoint");
    expect((await call(`/v1/runs/${live.runId}/checkpoint`)).status).toBe(403);
    expect((await call(`/v1/runs/${live.runId}/checkpoint`, { key: live.viewerToken })).status).toBe(403);
    const bad = await call(`/v1/runs/${live.runId}/checkpoint?epoch=1&generation=1&sourceSeq=0&digest=md5:x`, {
      method: "PUT",
      key: live.runnerToken,
      body: "x",
    });
    expect((await json(bad, 400)).error.code).toBe("invalid_query");
  });

  it("a finished run takes no checkpoint (409 terminal_run)", async () => {
    const live = await runWith([session(1)]);
    live.runner.send({ type: "complete", epoch: live.epoch, outcome: { status: "succeeded" } });
    await live.runner.next("completed");
    const upload = { epoch: live.epoch, generation: 1, sourceSeq: 1, body: patterned(10) };
    expect((await json(await putCheckpoint(live.runId, live.runnerToken, upload), 409)).error.code).toBe(
      "terminal_run",
    );
  });

  it("the limit defaults to 50 MiB when CHECKPOINT_MAX_BYTES is unset or not a positive whole number", () => {
    expect(CHECKPOINT_MAX_BYTES_DEFAULT).toBe(52_428_800);
    expect(checkpointLimit({} as never)).toBe(52_428_800);
    expect(checkpointLimit({ CHECKPOINT_MAX_BYTES: "nope" } as never)).toBe(52_428_800);
    expect(checkpointLimit({ CHECKPOINT_MAX_BYTES: "1000" } as never)).toBe(1000);
  });
});
