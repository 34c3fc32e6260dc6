import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";
import { call } from "../helpers.ts";

// Checks real responses against the OpenAPI document the worker serves: the status must be one
// the operation documents, and a JSON body must match that status's schema. Objects are closed
// for the check (`additionalProperties: false` wherever the document leaves it open), so a
// field the server sends but the document does not name fails too.

export type Method = "get" | "post" | "put" | "delete" | "head" | "options";
type Json = any;

const DOC_ID = "https://agent-run-edge.test/openapi.json";

export async function fetchDocument(): Promise<Json> {
  const response = await call("/openapi.json", { key: null });
  expect(response.status).toBe(200);
  return response.json();
}

/** A deep copy where every object schema with properties is closed, and component refs are absolute. */
function closedForChecking(node: Json): Json {
  if (Array.isArray(node)) return node.map(closedForChecking);
  if (node === null || typeof node !== "object") return node;
  const copy: Json = {};
  for (const [key, value] of Object.entries(node)) {
    copy[key] =
      key === "$ref" && typeof value === "string" && value.startsWith("#/") ? DOC_ID + value : closedForChecking(value);
  }
  if (copy.type === "object" && copy.properties && copy.additionalProperties === undefined) {
    copy.additionalProperties = false;
  }
  return copy;
}

export class Documented {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly closed: Json;
  private readonly validators = new Map<string, ValidateFunction>();
  /** Every `METHOD status` a check has seen, to tell which documented responses were exercised. */
  readonly seen = new Set<string>();

  readonly document: Json;

  constructor(document: Json) {
    this.document = document;
    addFormats(this.ajv);
    this.closed = closedForChecking(document);
    this.ajv.addSchema(this.closed, DOC_ID);
  }

  operation(method: Method, path: string): Json {
    const operation = this.closed.paths[path]?.[method];
    if (!operation) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
    return operation;
  }

  /** Checks a body against a schema of the document: `#/components/schemas/RunEvent`, say. */
  expectMatches(pointer: string, body: unknown): void {
    this.expectValid(pointer, { $ref: DOC_ID + pointer }, body);
  }

  /** Checks one response against `method path` in the document; answers its parsed JSON body, if any. */
  async expectResponse(method: Method, path: string, response: Response): Promise<Json> {
    const operation = this.operation(method, path);
    const status = String(response.status);
    const binary = response.headers.get("content-type")?.startsWith("application/octet-stream") ?? false;
    // A binary body (a checkpoint) is read as bytes: only its presence is checked, not its text.
    const text =
      method === "head" ? "" : binary ? `<${(await response.arrayBuffer()).byteLength} bytes>` : await response.text();
    const documented = operation.responses[status];
    if (!documented) {
      throw new Error(
        `${method.toUpperCase()} ${path} answered ${status}, which it does not document (${Object.keys(operation.responses)}): ${text}`,
      );
    }
    this.seen.add(`${method.toUpperCase()} ${path} ${status}`);
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
    if (!documented.content) {
      if (method !== "head" && response.status !== 101) expect(text, `${status} documents no body`).toBe("");
      return undefined;
    }
    const media = documented.content[type] ?? documented.content["*/*"];
    if (!media) throw new Error(`${method.toUpperCase()} ${path} ${status}: undocumented content type "${type}"`);
    if (type !== "application/json" || method === "head") return text;
    const body = JSON.parse(text);
    this.expectValid(`${method.toUpperCase()} ${path} ${status}`, media.schema, body);
    return body;
  }

  /** Sends a request to a documented operation (`{param}`s filled from `params`) and checks the answer. */
  async send(
    method: Method,
    path: string,
    params: Record<string, string> = {},
    init: Parameters<typeof call>[1] & { query?: string } = {},
  ): Promise<{ status: number; body: Json; response: Response }> {
    this.operation(method, path);
    const url = path.replaceAll(/\{(\w+)\}/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
      return encodeURIComponent(value);
    });
    const response = await call(url + (init.query ?? ""), { ...init, method: method.toUpperCase() });
    const copy = response.clone();
    const body = await this.expectResponse(method, path, response);
    return { status: copy.status, body, response: copy };
  }

  private expectValid(label: string, schema: Json, body: unknown): void {
    const key = JSON.stringify(schema);
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(key, validate);
    }
    if (!validate(body)) {
      throw new Error(
        `${label}: the body does not match its documented schema:\n${JSON.stringify(validate.errors, null, 2)}\nbody: ${JSON.stringify(body).slice(0, 2000)}`,
      );
    }
  }
}
