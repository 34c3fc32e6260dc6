import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll } from "vitest";

/** One request the receiver got, as it got it. */
export interface Received {
  path: string;
  id: string;
  arrivedAt: number;
  /** What the receiver answered; null when it never answered. */
  status: number | null;
  headers: Record<string, string>;
  body: string;
}

/**
 * How the receiver answers a request to a path: `fail(n)` 500s the first n attempts of each
 * webhook-id then 200s, `never()` holds the request unanswered, `gone()` 410s, `ok()` 200s.
 */
export type Behaviour = { kind: "fail"; times: number } | { kind: "never" } | { kind: "gone" } | { kind: "ok" };

/**
 * A real webhook receiver on loopback (node:http), as a tenant would run one: it records every
 * request, answers as its path's behaviour says, and dedupes by `webhook-id` as the spec tells
 * receivers to. `behave` changes a path's behaviour while it runs.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Accepted (2xx) messages by webhook-id: what the receiver acts on, each once. */
  readonly accepted = new Map<string, Received>();
  private readonly server: http.Server;
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly held = new Set<http.ServerResponse>();

  private constructor(server: http.Server) {
    this.server = server;
  }

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = http.createServer((req, res) => receiver?.handle(req, res));
    receiver = new WebhookReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  behave(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  /** Requests to `path`, oldest first. */
  to(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  /** Checks the request's signature with the Standard Webhooks library; throws when it does not verify. */
  static verify(received: Received, secret: string): unknown {
    return new Webhook(secret).verify(received.body, received.headers);
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "/";
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(",") : (value ?? ""),
        ]),
      );
      const id = headers["webhook-id"] ?? "";
      const record: Received = {
        path,
        id,
        arrivedAt: Date.now(),
        status: null,
        headers,
        body: Buffer.concat(chunks).toString(),
      };
      this.received.push(record);
      const behaviour = this.behaviours.get(path) ?? { kind: "ok" };
      if (behaviour.kind === "never") {
        this.held.add(res);
        return;
      }
      const earlier = this.received.filter((r) => r.path === path && r.id === id).length - 1;
      const status =
        behaviour.kind === "gone" ? 410 : behaviour.kind === "fail" && earlier < behaviour.times ? 500 : 200;
      record.status = status;
      if (status === 200 && !this.accepted.has(id)) this.accepted.set(id, record);
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "no");
    });
  }
}

/** One receiver for a test file: started before its tests, stopped after them. */
export function useWebhookReceiver(): { readonly receiver: WebhookReceiver } {
  let receiver: WebhookReceiver | undefined;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
  });
  return {
    get receiver() {
      if (!receiver) throw new Error("the webhook receiver is not running: use it inside a test");
      return receiver;
    },
  };
}
