import { runConformanceTests } from "@durable-streams/server-conformance-tests";
import { afterAll, beforeAll } from "vitest";
import { type DevServer, startWranglerDev } from "../support/wrangler-dev.ts";

/**
 * The official Durable Streams conformance suite against this worker under a real `wrangler dev`.
 * The suite sends no credentials, so the server runs with ALLOW_ANONYMOUS_STREAMS=true; the
 * suite's streams land in the sandbox tenant "anonymous". Its six "Reserved subscription APIs"
 * cases run only with `subscriptions: true`; subscriptions are not implemented, so they are left
 * off and the suite reports them as skipped.
 */
const LONG_POLL_MS = 3_000;
// The suite reads baseUrl lazily, so it can be filled in once the server is up.
const config = { baseUrl: "http://127.0.0.1:0", longPollTimeoutMs: LONG_POLL_MS };
let server: DevServer | null = null;

beforeAll(async () => {
  server = await startWranglerDev({ ALLOW_ANONYMOUS_STREAMS: "true", STREAM_LONG_POLL_MS: String(LONG_POLL_MS) });
  config.baseUrl = server.url;
});

afterAll(async () => {
  await server?.stop();
});

runConformanceTests(config);
