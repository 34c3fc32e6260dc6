import type { z } from "zod";
import {
  type ErrorCode,
  ERROR_STATUS,
  errorBody,
  type Failure,
  isFailure,
  MAX_FRAME_BYTES,
} from "../protocol/index.ts";
import type { AppContext } from "./app-env.ts";

/** An error response in the one shape every route uses. */
export function errorResponse(code: ErrorCode, message: string, extra?: Record<string, unknown>): Response {
  return Response.json({ ...errorBody(code, message), ...(extra ?? {}) }, { status: ERROR_STATUS[code] });
}

export function failureResponse(failure: Failure): Response {
  return errorResponse(failure.code, failure.message, failure.details);
}

/** Answers a Failure with its mapped status, anything else as JSON with `status`. */
export function respond<T>(result: T | Failure, status = 200): Response {
  return isFailure(result) ? failureResponse(result) : Response.json(result, { status });
}

function describe(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ");
}

/** Reads and validates a JSON body; an empty body counts as `{}`. */
export async function readBody<S extends z.ZodType>(c: AppContext, schema: S): Promise<z.infer<S> | Response> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_FRAME_BYTES)
    return errorResponse("payload_too_large", `bodies are limited to ${MAX_FRAME_BYTES} bytes`);
  const text = await c.req.text();
  if (new TextEncoder().encode(text).byteLength > MAX_FRAME_BYTES) {
    return errorResponse("payload_too_large", `bodies are limited to ${MAX_FRAME_BYTES} bytes`);
  }
  let json: unknown = {};
  if (text.trim() !== "") {
    try {
      json = JSON.parse(text);
    } catch {
      return errorResponse("invalid_json", "the body is not valid JSON");
    }
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : errorResponse("invalid_body", describe(parsed.error));
}

export function readQuery<S extends z.ZodType>(c: AppContext, schema: S): z.infer<S> | Response {
  const parsed = schema.safeParse(c.req.query());
  return parsed.success ? parsed.data : errorResponse("invalid_query", describe(parsed.error));
}
