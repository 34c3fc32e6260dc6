import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { CODEX_BIN } from "./paths.ts";

type JsonSchema = { definitions?: Record<string, unknown>; oneOf?: unknown[]; [key: string]: unknown };

/**
 * The app-server protocol of the installed codex, from its own JSON Schema
 * (`codex app-server generate-json-schema`, offline): checks that a message the app server could
 * print — a notification, a server request, or the response to one of our requests — has the
 * shape that version of codex defines. The fixture agent's messages are checked against it.
 */
export class CodexProtocol {
  private readonly dir: string;
  private readonly notifications = new Map<string, z.ZodType>();
  private readonly requests = new Map<string, z.ZodType>();
  private readonly cache = new Map<string, z.ZodType | null>();

  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "codex-schema-"));
    try {
      const out = path.join(this.dir, "schema");
      execFileSync(CODEX_BIN, ["app-server", "generate-json-schema", "--out", out], {
        env: { PATH: process.env.PATH, HOME: this.dir },
        stdio: "ignore",
        timeout: 30_000,
      });
      this.index("ServerNotification.json", this.notifications);
      this.index("ServerRequest.json", this.requests);
    } catch (err) {
      this.dispose();
      throw err;
    }
  }

  /** Problems with `msg` as codex would print it, or [] (`requestMethod`: what an id answered). */
  problems(msg: Record<string, unknown>, requestMethod: (id: unknown) => string | undefined): string[] {
    const method = typeof msg.method === "string" ? msg.method : undefined;
    if (method !== undefined) {
      const table = msg.id === undefined ? this.notifications : this.requests;
      const schema = table.get(method);
      if (!schema)
        return [`codex ${this.version()} has no ${msg.id === undefined ? "notification" : "request"} ${method}`];
      return issues(`${method} params`, schema, msg.params);
    }
    const answered = requestMethod(msg.id);
    if (answered === undefined) return [`a response to an id nobody sent: ${JSON.stringify(msg.id)}`];
    if (msg.error !== undefined) return [];
    const schema = this.response(answered);
    return schema ? issues(`${answered} result`, schema, msg.result) : [`no response schema for ${answered}`];
  }

  version(): string {
    return execFileSync(CODEX_BIN, ["--version"], { encoding: "utf8" }).trim();
  }

  dispose(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private load(file: string): JsonSchema | null {
    const full = path.join(this.dir, "schema", file);
    return fs.existsSync(full) ? (JSON.parse(fs.readFileSync(full, "utf8")) as JsonSchema) : null;
  }

  /** Method → params schema, from a `oneOf` of `{method: {enum: [m]}, params: {$ref}}`. */
  private index(file: string, into: Map<string, z.ZodType>): void {
    const doc = this.load(file);
    if (!doc?.oneOf) throw new Error(`${file} is not a oneOf of methods`);
    for (const variant of doc.oneOf as { properties?: Record<string, { enum?: string[]; $ref?: string }> }[]) {
      const method = variant.properties?.method?.enum?.[0];
      const ref = variant.properties?.params?.$ref;
      if (method && ref)
        into.set(method, z.fromJSONSchema({ $schema: doc.$schema, $ref: ref, definitions: doc.definitions } as never));
    }
  }

  /** `thread/start` → v2/ThreadStartResponse.json (or v1/, for `initialize`). */
  private response(method: string): z.ZodType | null {
    if (!this.cache.has(method)) {
      const name = `${method
        .split("/")
        .map((s) => s.charAt(0).toUpperCase() + s.slice(1))
        .join("")}Response.json`;
      const doc = this.load(`v2/${name}`) ?? this.load(`v1/${name}`);
      this.cache.set(method, doc ? z.fromJSONSchema(doc as never) : null);
    }
    return this.cache.get(method) ?? null;
  }
}

function issues(what: string, schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : [`${what}: ${z.prettifyError(result.error)}`];
}
