import type { Hook } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import { fail, invalid, MAX_FRAME_BYTES, ok, parseJson, type Result } from "../protocol/index.ts";
import { readLimitedBody } from "./body-limit.ts";
import { failureResponse } from "./respond.ts";

const REFUSAL_OF = { json: "invalid_body", param: "invalid_path" } as const;

/**
 * What a failed path, query or body validation answers: our error shape, `invalid_path` (400)
 * for the path, `invalid_query` (400) for the query, `invalid_body` (422) for the body.
 */
export const validationHook: Hook<unknown, any, any, Response | undefined> = (result) => {
  if (result.success) return undefined;
  const code = REFUSAL_OF[result.target as keyof typeof REFUSAL_OF] ?? "invalid_query";
  return failureResponse(invalid(code, result.error));
};

/** Refuses bytes that are not UTF-8 rather than reading them as U+FFFD. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads a JSON body of at most MAX_FRAME_BYTES, refusing it at the limit with or without a
 * Content-Length, and JSON nesting deeper than MAX_JSON_DEPTH before parsing it. The body is
 * read whatever its Content-Type (curl's `-d` says form-urlencoded); an empty body counts as `{}`.
 */
async function readJsonBody(request: Request): Promise<Result<unknown>> {
  const bytes = await readLimitedBody(request, MAX_FRAME_BYTES);
  if (!bytes.ok) return bytes;
  let text: string;
  try {
    text = UTF8.decode(bytes.value);
  } catch {
    return fail("invalid_json", "the body is not valid UTF-8");
  }
  return text.trim() === "" ? ok({}) : parseJson(text, "invalid_body");
}

/**
 * Validates the body against `schema`; the handler reads it with `c.req.valid("json")`. Used in
 * place of the generic JSON validator, which would buffer any size and skip non-JSON types.
 */
export function jsonBody(schema: z.ZodType): MiddlewareHandler {
  return async (c, next) => {
    const json = await readJsonBody(c.req.raw);
    if (!json.ok) return failureResponse(json);
    const parsed = schema.safeParse(json.value);
    if (!parsed.success) return failureResponse(invalid("invalid_body", parsed.error));
    c.req.addValidatedData("json", parsed.data as object);
    await next();
  };
}
