import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../routes/app-env.ts";
import { SECURITY_SCHEMES } from "../routes/access.ts";
import { documentWebhooks } from "./webhooks-doc.ts";

const DESCRIPTION = `An edge control plane for long-running AI-agent runs: one Durable Object per run holds its
ordered event log, claim epoch, commands, approvals and deadlines.

Every refusal is \`{"error": {"code", "message"}}\` with the status its code maps to; a refused
request changes nothing. Bodies are JSON, at most 1 MiB, nested at most 128 levels.

The WebSocket frames are in docs/PROTOCOL.md, with JSON Schemas at /schemas/runner-frames.json
and /schemas/viewer-frames.json. The Durable Streams routes carry bytes in their stream's content
type; their protocol is docs/STREAMS.md.`;

const TAGS = [
  { name: "runs", description: "Creating, reading, listing and purging runs; minting their tokens" },
  { name: "operators", description: "Commands, approval decisions and cancels" },
  { name: "recovery", description: "Runs lost with their sandbox: the operator's decision, checkpoints, resuming" },
  { name: "sockets", description: "The runner and viewer WebSockets (frames: docs/PROTOCOL.md)" },
  { name: "durable streams", description: "Resumable HTTP streams (docs/STREAMS.md)" },
  {
    name: "webhooks",
    description: "Endpoints told of runs' status changes, signed as Standard Webhooks (docs/WEBHOOKS.md)",
  },
  { name: "usage", description: "The tenant's provider usage (tokens, stated cost) by day, agent or tag" },
  { name: "reference", description: "This document, the frames' JSON Schemas and the reference page" },
];

/**
 * The OpenAPI 3.1 document of every route `app` declares (src/routes/api-route.ts), with the
 * security schemes they name.
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>) {
  for (const [name, scheme] of Object.entries(SECURITY_SCHEMES)) {
    app.openAPIRegistry.registerComponent("securitySchemes", name, scheme);
  }
  documentWebhooks(app);
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "agent-run-edge", version: "0.1.0", description: DESCRIPTION },
    tags: TAGS,
  });
}
