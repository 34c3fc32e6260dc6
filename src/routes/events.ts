import { Hono } from "hono";
import { EventsQuery } from "../protocol/index.ts";
import { runStub } from "../objects/stubs.ts";
import type { AppEnv } from "./app-env.ts";
import { runAccess } from "./auth.ts";
import { failureResponse, readQuery, respond } from "./respond.ts";

/** Reading a run's event log a page at a time. */
export const events = new Hono<AppEnv>();

events.get("/:runId/events", async (c) => {
  const access = runAccess(c, { apiKey: true, tokens: ["viewer"] });
  if (!access.ok) return failureResponse(access);
  const query = readQuery(c, EventsQuery);
  if (!query.ok) return failureResponse(query);
  const stub = runStub(c.env, access.value.tenant, access.value.runId);
  return respond(await stub.events(query.value.after, query.value.limit));
});
