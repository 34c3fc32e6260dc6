import net from "node:net";

/**
 * A loopback TCP proxy that can cut every connection through it on demand. WebSocket handshakes
 * through it offer no compression, so the edge's frames cross it as plain text.
 */
export interface CutProxy {
  port: number;
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Destroys every open connection (both sides), as a network failure would. */
  cutAll(): number;
  /** Connections open now (each a client–edge pair). */
  openConnections(): number;
  /** Cuts each open connection for which `choose` answers true; returns how many were cut. */
  cutEach(choose: () => boolean): number;
  /**
   * Arms a one-shot cut: the next chunk from the edge that carries `marker` (e.g. the start of a
   * `claimed` frame's JSON) is forwarded only up to the WebSocket frame holding it, and that
   * connection is cut there, so the client never receives the frame. `happened` throws when the
   * marker was found outside a plain text frame.
   */
  cutAtServerFrame(marker: string): { happened(): boolean };
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Sees every chunk the edge sends, by connection number (e.g. to read its frames). */
  onServerData?(connection: number, chunk: Buffer): void;
}

export async function startProxy(targetPort: number, options: ProxyOptions = {}): Promise<CutProxy> {
  const open = new Set<net.Socket>();
  const pairs = new Set<() => void>();
  let accepted = 0;
  let armed: { marker: Buffer; fired: boolean; error?: string } | null = null;
  const server = net.createServer((client) => {
    const connection = ++accepted;
    const upstream = net.connect(targetPort, "127.0.0.1");
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
      pairs.delete(drop);
    };
    pairs.add(drop);
    client.on("data", (chunk: Buffer) => upstream.write(withoutCompression(chunk)));
    upstream.on("data", (chunk: Buffer) => {
      const at = armed && !armed.fired ? chunk.indexOf(armed.marker) : -1;
      if (armed && at >= 0) {
        armed.fired = true;
        const start = frameStart(chunk, at);
        if (start === null)
          armed.error = `no WebSocket text frame header before the marker (is the stream compressed?)`;
        const forwarded = chunk.subarray(0, start ?? 0);
        options.onServerData?.(connection, forwarded);
        client.write(forwarded, drop);
        return;
      }
      options.onServerData?.(connection, chunk);
      client.write(chunk);
    });
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    cutAll() {
      const n = open.size;
      for (const s of open) s.destroy();
      open.clear();
      pairs.clear();
      return n;
    },
    openConnections: () => pairs.size,
    cutEach(choose) {
      let cut = 0;
      for (const drop of [...pairs]) {
        if (!choose()) continue;
        drop();
        cut++;
      }
      return cut;
    },
    cutAtServerFrame(marker) {
      const cut: NonNullable<typeof armed> = { marker: Buffer.from(marker), fired: false };
      armed = cut;
      return {
        happened() {
          if (cut.error) throw new Error(cut.error);
          return cut.fired;
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Where the unmasked server text frame whose payload starts at `payloadAt` begins: two header
 * bytes for payloads under 126 bytes, four for up to 64 KiB.
 */
function frameStart(chunk: Buffer, payloadAt: number): number | null {
  if (payloadAt >= 2 && chunk[payloadAt - 2] === 0x81 && (chunk[payloadAt - 1] ?? 126) < 126) return payloadAt - 2;
  if (payloadAt >= 4 && chunk[payloadAt - 4] === 0x81 && chunk[payloadAt - 3] === 126) return payloadAt - 4;
  return null;
}

/** A client chunk with a WebSocket handshake's extension offer (permessage-deflate) left out. */
function withoutCompression(chunk: Buffer): Buffer {
  const text = chunk.toString("latin1");
  const stripped = text.replace(/\r\nsec-websocket-extensions:[^\r]*/i, "");
  return stripped === text ? chunk : Buffer.from(stripped, "latin1");
}
