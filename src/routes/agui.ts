import type { Context } from "hono";
import { z } from "zod";
import { aguiStream } from "../agui/stream.ts";
import type { Env } from "../env.ts";
import { parseOffset } from "../log/offsets.ts";
import { fail, ok, type Result, RunParams } from "../protocol/index.ts";
import { RUN_READER_IN_BROWSER } from "./access.ts";
import type { RunEnv } from "./app-env.ts";
import { apiRouter, type RawRoute, rawRoute } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { failureResponse, unwrap } from "./respond.ts";

/**
 * A run as an AG-UI event stream (docs/AGUI.md): GET for EventSource and plain clients, POST
 * for AG-UI's HttpAgent, which always POSTs a RunAgentInput (ignored: the run is already running).
 */
export const agui = apiRouter();

/** Idle this long, a heartbeat comment (AGUI_HEARTBEAT_MS overrides it). */
const HEARTBEAT_MS = 15_000;
/** A response ends after this long, so a viewer never holds a read open in the run's object for good. */
const LIFETIME_MS = 300_000;

const resumeDescription =
  "The last seq the client has; the stream carries the events after it. Sent by EventSource when it reconnects.";
const AguiQuery = z.object({
  after: z
    .string()
    .optional()
    .describe("As `Last-Event-ID`, for a first connection; the header wins when both are sent"),
});
const AguiHeaders = z.object({ "Last-Event-ID": z.string().optional().describe(resumeDescription) });

const aguiRoute = (method: "get" | "post") =>
  ({
    method,
    path: "/{runId}/agui",
    tags: ["runs"],
    summary:
      method === "get"
        ? "The run as an AG-UI event stream (SSE): replay from `Last-Event-ID`, then live"
        : "The same stream for AG-UI's HttpAgent, which POSTs",
    description:
      "AG-UI's SSE encoding (`data: <event JSON>`), each frame's `id:` the event's seq. It opens with a RUN_STARTED of its own, then one AG-UI event per log event (events that are not AG-UI's, and the agent's own turn boundaries, as CUSTOM `{name: type, value: data}`), and ends with RUN_FINISHED (succeeded) or RUN_ERROR once the run is terminal. A response resumed inside an open text message, tool call, reasoning message or step sends that one's START again, without an `id:`, just before the first event continuing it (AG-UI clients refuse a continuation without its start). An SSE comment is sent when idle for 15 s; a response lasts at most 5 minutes, after which the client resumes with `Last-Event-ID`. A POST's body (a RunAgentInput) is not read.",
    access: RUN_READER_IN_BROWSER,
    request: { params: RunParams, query: AguiQuery, headers: AguiHeaders },
    responses: {
      200: { description: "The AG-UI event stream", content: { "text/event-stream": { schema: { type: "string" } } } },
    },
    refusals: ["invalid_query", "invalid_request", "not_found", "gone"],
  }) satisfies RawRoute;

rawRoute(agui, aguiRoute("get"), serveAgui);
rawRoute(agui, aguiRoute("post"), serveAgui);

async function serveAgui(c: Context<RunEnv>): Promise<Response> {
  const after = resumePoint(c.req.header("last-event-id"), c.req.queries("after"));
  if (!after.ok) return failureResponse(after);
  const stub = runOf(c);
  const run = unwrap(await stub.get()); // unknown 404, purged 410
  const tail = await stub.readLog({ offset: { kind: "now" }, waitMs: 0 });
  const tailOffset = tail.kind === "read" ? parseOffset(tail.start) : null;
  if (tailOffset?.kind !== "at") return failureResponse(fail("not_found", "no such run"));
  if (after.value > tailOffset.seq) {
    const message = `seq ${after.value} is past the end of the run's log (its last event is seq ${tailOffset.seq})`;
    return failureResponse(fail("invalid_request", message));
  }
  const body = aguiStream(
    { page: (from) => stub.events(from, 500), read: (request) => stub.readLog(request) },
    { runId: run.id, after: after.value, tail: { seq: tailOffset.seq, offset: tailOffset } },
    bounds(c.env),
  );
  return new Response(body, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
  });
}

/** Where the client resumes: `Last-Event-ID` (an EventSource reconnecting), else `?after=`, else 0. */
function resumePoint(header: string | undefined, query: string[] | undefined): Result<number> {
  // A repeated `after` is refused, not read as its first value, as every other query route does.
  if (query !== undefined && query.length > 1) return fail("invalid_query", "after may be given once");
  if (header !== undefined && header.trim() !== "") {
    const seq = seqOf(header.trim());
    return seq === null ? fail("invalid_request", "Last-Event-ID must be a seq of this run: an integer ≥ 0") : ok(seq);
  }
  if (query?.[0] === undefined) return ok(0);
  const seq = seqOf(query[0]);
  return seq === null ? fail("invalid_query", "after must be a seq: an integer ≥ 0") : ok(seq);
}

function seqOf(text: string): number | null {
  if (!/^\d{1,15}$/.test(text)) return null;
  return Number(text);
}

function bounds(env: Env) {
  return {
    heartbeatMs: positive(env.AGUI_HEARTBEAT_MS) ?? HEARTBEAT_MS,
    lifetimeMs: positive(env.AGUI_STREAM_LIFETIME_MS) ?? LIFETIME_MS,
  };
}

function positive(value: string | undefined): number | null {
  const number = Number(value);
  return value !== undefined && Number.isFinite(number) && number > 0 ? number : null;
}
