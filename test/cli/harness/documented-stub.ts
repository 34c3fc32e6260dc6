/**
 * A loopback server that answers as the OpenAPI document says the edge may: each request is matched
 * to its documented operation and answered with one of that operation's documented responses, chosen
 * by the current scenario. Request bodies are checked against the document too, so a CLI that sends
 * what the API does not accept fails as surely as one that cannot read what the API answers.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { createHash } from "node:crypto";
import type { Duplex } from "node:stream";
import { Samples } from "./samples.ts";

type Json = any;

export interface Operation {
  key: string;
  method: string;
  template: string;
  pattern: RegExp;
  responses: Record<string, Json>;
  requestSchema: Json | undefined;
  webSocket: boolean;
}

/** One answer to one request: a status with a JSON body, or an upgrade that sends these frames. */
export type Answer = { kind: "http"; status: number; body: Json } | { kind: "frames"; frames: Json[] };

export interface Shape {
  /** e.g. `POST /v1/runs/{runId}/cancel 409 .error.code#1`. */
  name: string;
  answer: Answer;
  /** A 2xx (or a socket that ends with a terminal status): the command should succeed. */
  success: boolean;
}

export interface Seen {
  operation: string;
  problems: string[];
}

const DOC_ID = "https://documented.test/openapi.json";

export class DocumentedStub {
  readonly operations: Operation[];
  private readonly samples: Samples;
  private readonly frames: Samples;
  private readonly validate = new Ajv2020({ strict: false, allErrors: true });
  private readonly checks = new Map<string, ValidateFunction>();
  private server: http.Server | undefined;
  private override: { operation: string; answer: Answer } | undefined;
  private counts = new Map<string, number>();
  /** What this scenario's requests were, with anything wrong in them. */
  seen: Seen[] = [];
  url = "";

  constructor(document: Json, viewerFrames: Json) {
    this.samples = new Samples(document);
    this.frames = new Samples(viewerFrames);
    addFormats(this.validate);
    this.validate.addSchema(withAbsoluteRefs(document), DOC_ID);
    this.operations = [];
    for (const [template, item] of Object.entries<Json>(document.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        const responses = operation.responses ?? {};
        this.operations.push({
          key: `${method.toUpperCase()} ${template}`,
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
          responses,
          requestSchema: operation.requestBody?.content?.["application/json"]?.schema,
          webSocket: "101" in responses,
        });
      }
    }
  }

  /** Every documented answer of an operation: each 2xx shape, each refusal code of each error status. */
  shapes(key: string): Shape[] {
    const operation = this.operation(key);
    const out: Shape[] = [];
    if (operation.webSocket) {
      for (const variant of this.frames.variants({ $ref: "#/$defs/ServerToViewer" })) {
        const frames = variant.value.type === "end" ? [variant.value] : [variant.value, END_SUCCEEDED];
        out.push({ name: `${key} 101 ${variant.name}`, answer: { kind: "frames", frames }, success: true });
      }
    }
    for (const [status, response] of Object.entries<Json>(operation.responses)) {
      const code = Number(status);
      const schema = response.content?.["application/json"]?.schema;
      if (code === 101 || !schema) continue;
      const success = code >= 200 && code < 300;
      const variants = success ? this.samples.variants(schema) : this.refusals(schema);
      for (const variant of variants) {
        out.push({
          name: `${key} ${status} ${variant.name}`,
          answer: { kind: "http", status: code, body: variant.value },
          success,
        });
      }
    }
    return out;
  }

  /** One refusal per documented error code (a minimal body as well: no extra fields). */
  private refusals(schema: Json): { name: string; value: Json }[] {
    const codes = this.samples.resolve(this.samples.resolve(schema).properties?.error)?.properties?.code;
    const values: string[] = this.samples.resolve(codes)?.enum ?? ["error"];
    const out = values.map((value) => {
      const body = this.samples.value(schema, "full");
      body.error = { code: value, message: `documented refusal ${value}` };
      return { name: `.error.code=${value}`, value: body };
    });
    const minimal = this.samples.value(schema, "minimal");
    return [...out, { name: "minimal", value: minimal }];
  }

  /** The next requests to `operation` get `answer`; every other operation its first documented success. */
  answerWith(operation: string | undefined, answer?: Answer): void {
    this.override = operation && answer ? { operation, answer } : undefined;
    this.counts.clear();
    this.seen = [];
  }

  operation(key: string): Operation {
    const found = this.operations.find((op) => op.key === key);
    if (!found) throw new Error(`${key} is not in the document`);
    return found;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let text = "";
      req.setEncoding("utf8");
      req.on("data", (chunk) => (text += chunk));
      req.on("end", () => {
        let answer: Answer;
        try {
          answer = this.answerFor(req, text);
        } catch (error) {
          // A document this stub cannot serve is the test's fault: said, never a hang.
          this.seen.push({ operation: `${req.method} ${req.url}`, problems: [`no answer: ${String(error)}`] });
          send(res, 599, { error: { code: "stub_failed", message: String(error) } });
          return;
        }
        if (answer.kind === "frames") {
          res.writeHead(426, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { code: "upgrade_required", message: "a WebSocket route" } }));
          return;
        }
        send(res, answer.status, answer.body);
      });
    });
    this.server.on("upgrade", (req, socket) => {
      const answer = this.answerFor(req, "");
      if (answer.kind === "http") {
        const body = JSON.stringify(answer.body);
        socket.end(
          `HTTP/1.1 ${answer.status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
        return;
      }
      acceptUpgrade(req, socket);
      for (const frame of answer.frames) socket.write(textFrame(JSON.stringify(frame)));
      const last = answer.frames[answer.frames.length - 1];
      if (last?.type === "end") socket.end(closeFrame(1000));
      // What the client sends (acks) is read and dropped.
      socket.on("data", () => {});
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private answerFor(req: http.IncomingMessage, text: string): Answer {
    const url = new URL(req.url ?? "/", "http://stub");
    const method = req.method ?? "GET";
    const operation = this.operations.find((op) => op.method === method && op.pattern.test(url.pathname));
    const seen: Seen = { operation: operation?.key ?? `${method} ${url.pathname}`, problems: [] };
    this.seen.push(seen);
    if (!operation) {
      seen.problems.push("an undocumented route");
      return { kind: "http", status: 404, body: { error: { code: "not_found", message: "undocumented" } } };
    }
    if (operation.requestSchema && text !== "") this.checkBody(operation, text, seen);
    const count = (this.counts.get(operation.key) ?? 0) + 1;
    this.counts.set(operation.key, count);
    // A success answers the first call only, so a page that says "more" is followed by a last one;
    // a refusal answers every call, as a verdict would.
    const override = this.override?.operation === operation.key ? this.override.answer : undefined;
    if (override && (count === 1 || !isSuccess(override))) return override;
    return this.defaultAnswer(operation, count);
  }

  /** The first documented success; a repeat (the next page, a re-read) gets its minimal shape, so paging ends. */
  private defaultAnswer(operation: Operation, count: number): Answer {
    if (operation.webSocket) return { kind: "frames", frames: [END_SUCCEEDED] };
    const status = Object.keys(operation.responses)
      .map(Number)
      .filter((code) => code >= 200 && code < 300)
      .sort((a, b) => a - b)[0];
    const schema = operation.responses[String(status)]?.content?.["application/json"]?.schema;
    if (status === undefined || !schema) throw new Error(`${operation.key} documents no JSON success`);
    return { kind: "http", status, body: this.samples.value(schema, count === 1 ? "full" : "minimal") };
  }

  private checkBody(operation: Operation, text: string, seen: Seen): void {
    let body: Json;
    try {
      body = JSON.parse(text);
    } catch {
      seen.problems.push(`a body that is not JSON: ${text.slice(0, 80)}`);
      return;
    }
    let check = this.checks.get(operation.key);
    if (!check) {
      check = this.validate.compile(withAbsoluteRefs(operation.requestSchema));
      this.checks.set(operation.key, check);
    }
    if (!check(body)) seen.problems.push(`a body the document refuses: ${this.validate.errorsText(check.errors)}`);
  }
}

const END_SUCCEEDED = { type: "end", status: "succeeded" };

function isSuccess(answer: Answer): boolean {
  return answer.kind === "frames" || (answer.status >= 200 && answer.status < 300);
}

function send(res: http.ServerResponse, status: number, body: Json): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The server half of RFC 6455's handshake: enough for a test's own socket, which sends unmasked text frames. */
function acceptUpgrade(req: http.IncomingMessage, socket: Duplex): void {
  const accept = createHash("sha1")
    .update(`${req.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
    .digest("base64");
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`,
  );
}

function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const length = payload.length;
  const header =
    length < 126
      ? Buffer.from([0x81, length])
      : length < 65536
        ? Buffer.from([0x81, 126, length >> 8, length & 0xff])
        : Buffer.concat([Buffer.from([0x81, 127]), bigLength(length)]);
  return Buffer.concat([header, payload]);
}

function bigLength(length: number): Buffer {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(BigInt(length));
  return out;
}

function closeFrame(code: number): Buffer {
  return Buffer.from([0x88, 2, code >> 8, code & 0xff]);
}

function withAbsoluteRefs(node: Json): Json {
  if (Array.isArray(node)) return node.map(withAbsoluteRefs);
  if (node === null || typeof node !== "object") return node;
  const copy: Json = {};
  for (const [key, value] of Object.entries(node)) {
    copy[key] =
      key === "$ref" && typeof value === "string" && value.startsWith("#/") ? DOC_ID + value : withAbsoluteRefs(value);
  }
  return copy;
}
