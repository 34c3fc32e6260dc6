import { z } from "zod";
import {
  PoolEdgeFrame,
  PoolHostFrame,
  RunnerFrame,
  ServerToRunner,
  ServerToViewer,
  ViewerFrame,
} from "../protocol/index.ts";

/**
 * JSON Schemas (draft 2020-12) of the WebSocket frames, both directions, generated from the zod
 * schemas the object parses with, so a bridge or viewer in another language can validate its
 * frames. Each document validates any frame of its socket; `#/$defs/<name>` one direction.
 * Schemas are of what a receiver accepts (zod's input side): frames to the server are closed
 * (unknown fields refused), frames from it are open (a client ignores fields it does not know).
 */
function frameSchemas(title: string, description: string, directions: z.ZodType[]) {
  const schema = z.toJSONSchema(z.union(directions), { io: "input", target: "draft-2020-12" });
  return { $schema: schema.$schema, title, description, anyOf: schema.anyOf, $defs: schema.$defs };
}

export const FRAME_SCHEMAS = {
  "runner-frames.json": () =>
    frameSchemas(
      "Runner WebSocket frames",
      "GET /v1/runs/{runId}/runner. A runner sends #/$defs/RunnerFrame; the run's object sends #/$defs/ServerToRunner.",
      [RunnerFrame, ServerToRunner],
    ),
  "viewer-frames.json": () =>
    frameSchemas(
      "Viewer WebSocket frames",
      "GET /v1/runs/{runId}/watch. An interacting viewer sends #/$defs/ViewerFrame; the run's object sends #/$defs/ServerToViewer.",
      [ViewerFrame, ServerToViewer],
    ),
  "pool-frames.json": () =>
    frameSchemas(
      "Pool host WebSocket frames",
      "GET /v1/pools/connect. A pool host sends #/$defs/PoolHostFrame; the queue's dispatcher sends #/$defs/PoolEdgeFrame.",
      [PoolHostFrame, PoolEdgeFrame],
    ),
} as const;
