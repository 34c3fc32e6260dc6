import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { apiRouter, rawRoute } from "../routes/api-route.ts";
import type { AppEnv } from "../routes/app-env.ts";
import { openApiDocument } from "./document.ts";
import { FRAME_SCHEMAS } from "./frame-schemas.ts";

const open = { security: [], refusals: [] };
const tags = ["reference"];
const json = (description: string) => ({
  description,
  content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
});

/** Generated on first use, then kept for the isolate's life. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/**
 * The API's own reference: the OpenAPI document of `app`, and the frames' JSON Schemas. Served
 * without credentials, like any public API description.
 */
export function referenceRoutes(app: OpenAPIHono<AppEnv>): OpenAPIHono<AppEnv> {
  const reference = apiRouter();
  const document = once(() => openApiDocument(app));
  rawRoute(
    reference,
    {
      method: "get",
      path: "/openapi.json",
      tags,
      summary: "This OpenAPI 3.1 document",
      access: open,
      responses: { 200: json("The document") },
      refusals: [],
    },
    (c) => c.json(document()),
  );
  for (const [name, schema] of Object.entries(FRAME_SCHEMAS)) {
    const generated = once(schema);
    rawRoute(
      reference,
      {
        method: "get",
        path: `/schemas/${name}`,
        tags,
        summary: `JSON Schema of the ${name.replace("-frames.json", "")} WebSocket's frames, both directions`,
        access: open,
        responses: { 200: json("A JSON Schema, draft 2020-12") },
        refusals: [],
      },
      (c) => c.json(generated()),
    );
  }
  return reference;
}
