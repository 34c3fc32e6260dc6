import { z } from "zod";
import { POOL_CLOSE_SILENT, type PoolEdgeFrame, type PoolHostFrame } from "../protocol/index.ts";

type Hello = Extract<PoolHostFrame, { type: "hello" }>;

/**
 * What a pool host's hibernatable socket remembers: its key, and its `hello` once sent. Checked
 * when read back, since the runtime returns whatever an earlier version stored.
 */
const HostAttachment = z.object({
  keyId: z.string(),
  connectedAt: z.number(),
  /** When the host last sent anything (heartbeats included). */
  lastSeenAt: z.number().optional(),
  hello: z
    .object({ hostId: z.string(), slots: z.number(), profiles: z.array(z.string()), labels: z.array(z.string()) })
    .nullable(),
});
export type HostAttachment = z.infer<typeof HostAttachment>;

/** A connected host that said hello. */
export interface Host {
  ws: WebSocket;
  keyId: string;
  connectedAt: number;
  hostId: string;
  slots: number;
  profiles: string[];
  labels: string[];
}

const HOST_TAG = "host";

/** How often a host sends a heartbeat (`welcome.heartbeatMs`). */
export const HOST_HEARTBEAT_MS = 30_000;

/**
 * A host silent this long (three missed heartbeats) is taken for a dead connection: it is closed
 * and offered nothing more. Only its slots go; its runs go on through their own leases.
 */
export const HOST_SILENCE_MS = 3 * HOST_HEARTBEAT_MS;
const keyTag = (keyId: string) => `key:${keyId}`;

export function sendFrame(ws: WebSocket, frame: PoolEdgeFrame): void {
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // The host is gone; its close handler runs.
  }
}

export function closeHost(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}

/** A dispatcher's pool host sockets, accepted through the hibernation API. */
export class PoolHosts {
  private readonly ctx: DurableObjectState;

  constructor(ctx: DurableObjectState) {
    this.ctx = ctx;
  }

  accept(ws: WebSocket, keyId: string, now: number): void {
    this.ctx.acceptWebSocket(ws, [HOST_TAG, keyTag(keyId)]);
    ws.serializeAttachment({ keyId, connectedAt: now, hello: null } satisfies HostAttachment);
  }

  attachment(ws: WebSocket): HostAttachment | null {
    const parsed = HostAttachment.safeParse(ws.deserializeAttachment());
    return parsed.success ? parsed.data : null;
  }

  /** Notes that the host sent something. */
  touch(ws: WebSocket, now: number): void {
    const attachment = this.attachment(ws);
    if (attachment) ws.serializeAttachment({ ...attachment, lastSeenAt: now } satisfies HostAttachment);
  }

  /** Closes the hosts silent for HOST_SILENCE_MS; answers how many. */
  closeSilent(now: number): number {
    let closed = 0;
    for (const ws of this.ctx.getWebSockets(HOST_TAG)) {
      const attachment = this.attachment(ws);
      if (!attachment || now - (attachment.lastSeenAt ?? attachment.connectedAt) <= HOST_SILENCE_MS) continue;
      closeHost(ws, POOL_CLOSE_SILENT, `no frame for ${HOST_SILENCE_MS} ms`);
      closed += 1;
    }
    return closed;
  }

  setHello(ws: WebSocket, hello: Hello): void {
    const attachment = this.attachment(ws);
    if (!attachment) return;
    const { hostId, slots, profiles, labels } = hello;
    ws.serializeAttachment({ ...attachment, hello: { hostId, slots, profiles, labels } } satisfies HostAttachment);
  }

  /** Open sockets that said hello; for a hostId connected twice, the newer connection. */
  connected(): Host[] {
    const byId = new Map<string, Host>();
    const now = Date.now();
    for (const ws of this.ctx.getWebSockets(HOST_TAG)) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      const attachment = this.attachment(ws);
      if (!attachment?.hello) continue;
      if (now - (attachment.lastSeenAt ?? attachment.connectedAt) > HOST_SILENCE_MS) continue;
      const host: Host = { ws, keyId: attachment.keyId, connectedAt: attachment.connectedAt, ...attachment.hello };
      const earlier = byId.get(host.hostId);
      if (!earlier || earlier.connectedAt <= host.connectedAt) byId.set(host.hostId, host);
    }
    return [...byId.values()].sort((a, b) => a.hostId.localeCompare(b.hostId));
  }

  /** Other open sockets that said hello as `hostId` (a host reconnecting replaces them). */
  others(hostId: string, keep: WebSocket): WebSocket[] {
    return this.ctx
      .getWebSockets(HOST_TAG)
      .filter((ws) => ws !== keep && this.attachment(ws)?.hello?.hostId === hostId);
  }

  socketOf(hostId: string): WebSocket | null {
    return this.connected().find((host) => host.hostId === hostId)?.ws ?? null;
  }

  ofKey(keyId: string): WebSocket[] {
    return this.ctx.getWebSockets(keyTag(keyId));
  }
}
