import { EventsPage, EventsQuery, RunParams } from "../protocol/index.ts";
import { RUN_READER } from "./access.ts";
import { apiRoute, apiRouter, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { respond } from "./respond.ts";

/** Reading a run's event log a page at a time. */
export const events = apiRouter();

apiRoute(
  events,
  {
    method: "get",
    path: "/{runId}/events",
    tags: ["runs"],
    summary: "A page of the event log",
    description:
      "Events with `seq > after`, at most `limit` and at most READ_PAGE_MAX_BYTES of them (default 4 MiB; at least one event), so a page may hold fewer than `limit` with `hasMore`. Pass `nextAfter` as the next `after`.",
    access: RUN_READER,
    request: { params: RunParams, query: EventsQuery },
    responses: { 200: jsonResponse(EventsPage, "The page") },
    refusals: ["not_found", "gone"],
  },
  async (c) => {
    const { after, limit } = c.req.valid("query");
    return respond(c, await runOf(c).events(after, limit), 200);
  },
);
