import type { Context } from "hono";
import {
  CHECKPOINT_MAX_BYTES_DEFAULT,
  CheckpointQuery,
  CheckpointStored,
  invalid,
  RunParams,
} from "../protocol/index.ts";
import type { Env } from "../env.ts";
import { RUNNER_HTTP } from "./access.ts";
import { apiRouter, jsonResponse, rawRoute } from "./api-route.ts";
import type { RunEnv } from "./app-env.ts";
import { runOf } from "./auth.ts";
import { uploadCheckpoint } from "./checkpoint-upload.ts";
import { errorResponse, failureResponse } from "./respond.ts";

/**
 * A run's checkpoint: the provider's session files, packed by the bridge as opaque bytes, kept
 * in the run's SQLite (src/run/checkpoint-store.ts). Raw bodies, so raw routes behind the
 * runner token.
 */
export const checkpoints = apiRouter();
const tags = ["recovery"];
const binary = { type: "string" as const, format: "binary" };

/** CHECKPOINT_MAX_BYTES, or the default when unset or not a positive whole number. */
export function checkpointLimit(env: Env): number {
  const configured = Number(env.CHECKPOINT_MAX_BYTES);
  return Number.isSafeInteger(configured) && configured > 0 ? configured : CHECKPOINT_MAX_BYTES_DEFAULT;
}

rawRoute(
  checkpoints,
  {
    method: "put",
    path: "/{runId}/checkpoint",
    tags,
    summary: "Upload the run's checkpoint",
    description:
      "The body is opaque bytes (`application/octet-stream`), at most CHECKPOINT_MAX_BYTES (default 50 MiB). Only the runner holding the current claim (`epoch`) of the current `generation` may upload, covering at most the events stored (`sourceSeq`). The same digest as the current checkpoint answers 200 without reading the body; a new one replaces the previous whole (201). A refused or interrupted upload stores nothing.",
    access: RUNNER_HTTP,
    request: {
      params: RunParams,
      query: CheckpointQuery,
      body: { required: true, content: { "application/octet-stream": { schema: binary } } },
    },
    responses: {
      201: jsonResponse(CheckpointStored, "Stored: the run's new checkpoint"),
      200: jsonResponse(CheckpointStored, "The same bytes as the current checkpoint; what it covers is updated"),
    },
    refusals: [
      "invalid_request",
      "digest_mismatch",
      "not_found",
      "gone",
      "conflict",
      "terminal_run",
      "fenced",
      "checkpoint_ahead",
      "checkpoint_too_large",
    ],
  },
  async (c: Context<RunEnv>) => {
    const query = CheckpointQuery.safeParse(c.req.query());
    if (!query.success) return failureResponse(invalid("invalid_query", query.error));
    const maxBytes = checkpointLimit(c.env);
    if (Number(c.req.header("content-length") ?? "0") > maxBytes) {
      return errorResponse("checkpoint_too_large", `checkpoints are limited to ${maxBytes} bytes`);
    }
    const result = await uploadCheckpoint(runOf(c), c.req.raw.body, query.data, maxBytes);
    if (!result.ok) return failureResponse(result);
    return c.json({ checkpoint: result.value.checkpoint }, result.value.created ? 201 : 200);
  },
);

const header = (description: string) => ({ schema: { type: "string" as const }, description });

rawRoute(
  checkpoints,
  {
    method: "get",
    path: "/{runId}/checkpoint",
    tags,
    summary: "Download the run's checkpoint",
    description: "The bytes as uploaded; verify them against `Checkpoint-Digest`.",
    access: RUNNER_HTTP,
    request: { params: RunParams },
    responses: {
      200: {
        description: "The checkpoint's bytes",
        headers: {
          "Checkpoint-Digest": header("sha256:<hex> of the body"),
          "Checkpoint-Generation": header("The generation whose events it covers"),
          "Checkpoint-Source-Seq": header("The last sourceSeq of that generation it covers"),
        },
        content: { "application/octet-stream": { schema: binary } },
      },
    },
    refusals: ["not_found", "gone", "no_checkpoint"],
  },
  async (c: Context<RunEnv>) => {
    const stub = runOf(c);
    const head = await stub.checkpointHead();
    if (!head.ok) return failureResponse(head);
    const { checkpoint, uploadId, chunks } = head.value;
    let index = 0;
    // Read chunk by chunk, so a large checkpoint is never held whole; a replacement mid-read
    // cuts the body short of its Content-Length rather than mixing two checkpoints.
    const source = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (index >= chunks) return controller.close();
        const chunk = await stub.checkpointChunkAt(uploadId, index);
        index += 1;
        if (!chunk.ok || chunk.value === null) return controller.error(new Error("the checkpoint was replaced"));
        controller.enqueue(chunk.value);
      },
    });
    const body = new FixedLengthStream(checkpoint.bytes);
    void source.pipeTo(body.writable).catch(() => {});
    return new Response(body.readable, {
      headers: {
        "content-type": "application/octet-stream",
        "Checkpoint-Digest": checkpoint.digest,
        "Checkpoint-Generation": String(checkpoint.generation),
        "Checkpoint-Source-Seq": String(checkpoint.sourceSeq),
      },
    });
  },
);
