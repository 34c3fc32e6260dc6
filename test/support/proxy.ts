import net from "node:net";

/**
 * A loopback TCP proxy before a server under test, standing in for the network between it and
 * its clients: it can cut connections (all, some, or one exactly as a chosen frame passes),
 * freeze them (open, carrying nothing, like a dead NAT), and, with `holdMs`, hold a new
 * connection (not refuse it) while the server is down until it answers again. Connections are
 * numbered in the order they were accepted.
 */
export interface TestProxy {
  port: number;
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections open now, counting those held for the server; frozen ones no longer count. */
  openConnections(): number;
  /** Destroys every open connection (both sides), as a network failure would; returns how many. */
  cutAll(): number;
  /** Cuts each open connection, in the order accepted, for which `choose` answers true; returns how many. */
  cutEach(choose: () => boolean): number;
  /**
   * Arms a one-shot cut: the next chunk from the server that carries `marker` (e.g. the start of
   * a `claimed` frame's JSON) is forwarded only up to the WebSocket frame holding it, and that
   * connection is cut there, so the client never receives the frame. `happened` throws when the
   * marker was found outside a plain text frame.
   */
  cutAtServerFrame(marker: string): { happened(): boolean };
  /** Stops every connection open now, both ways, without closing it; later connections flow. */
  freezeAll(): number;
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Sees every chunk the server sends, by connection number (e.g. to read its frames). */
  onServerData?(connection: number, chunk: Buffer): void;
  /**
   * How long a new connection waits for the server to accept, dialling again every 100 ms (a
   * restart behind the proxy); past it, or with 0 (the default), a refused dial drops the client.
   */
  holdMs?: number;
  /**
   * Leave WebSocket handshakes as the client wrote them. By default their compression offer
   * (permessage-deflate) is left out, so the server's frames cross the proxy as plain text.
   */
  keepCompression?: boolean;
}

interface Connection {
  client: net.Socket;
  upstream: net.Socket | null;
  drop(): void;
}

/** `target`: the server's port, or a function for a server whose port changes across restarts. */
export async function startProxy(target: number | (() => number), options: ProxyOptions = {}): Promise<TestProxy> {
  const targetPort = typeof target === "number" ? () => target : target;
  const open = new Set<Connection>();
  const frozen = new Set<Connection>();
  let accepted = 0;
  let armed: { marker: Buffer; fired: boolean; error?: string } | null = null;

  const server = net.createServer((client) => {
    const number = ++accepted;
    const deadline = Date.now() + (options.holdMs ?? 0);
    const connection: Connection = {
      client,
      upstream: null,
      drop() {
        client.destroy();
        connection.upstream?.destroy();
        open.delete(connection);
      },
    };
    open.add(connection);
    client.pause(); // what the client sends waits for the server's side of the pair
    client.on("error", connection.drop);
    client.on("close", connection.drop);

    const relay = (upstream: net.Socket) => {
      client.on("data", (chunk: Buffer) => upstream.write(options.keepCompression ? chunk : withoutCompression(chunk)));
      upstream.on("data", (chunk: Buffer) => {
        const at = armed && !armed.fired ? chunk.indexOf(armed.marker) : -1;
        if (armed && at >= 0) {
          armed.fired = true;
          const start = frameStart(chunk, at);
          if (start === null)
            armed.error = "no WebSocket text frame header before the marker (is the stream compressed?)";
          const forwarded = chunk.subarray(0, start ?? 0);
          options.onServerData?.(number, forwarded);
          client.write(forwarded, connection.drop);
          return;
        }
        options.onServerData?.(number, chunk);
        client.write(chunk);
      });
      upstream.on("error", connection.drop);
      upstream.on("close", connection.drop);
      if (!frozen.has(connection)) client.resume();
    };
    dialUpstream(targetPort, client, deadline, connection.drop, (upstream) => {
      connection.upstream = upstream;
      relay(upstream);
      if (frozen.has(connection)) upstream.pause(); // frozen while it waited: it stays frozen
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  const cutEach = (choose: () => boolean) => {
    let cut = 0;
    for (const connection of [...open]) {
      if (!choose()) continue;
      connection.drop();
      cut++;
    }
    return cut;
  };
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    openConnections: () => open.size,
    cutAll: () => cutEach(() => true),
    cutEach,
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
    freezeAll() {
      const count = open.size;
      for (const connection of open) {
        connection.client.pause();
        connection.upstream?.pause();
        frozen.add(connection);
      }
      open.clear(); // frozen for good, until close()
      return count;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of [...open, ...frozen]) connection.drop();
        server.close(() => resolve());
      }),
  };
}

/**
 * Dials the server for one client connection, again every 100 ms while it refuses, until
 * `deadline` (a restart behind the proxy is waited out); past it `gaveUp` is called. A client that
 * went away meanwhile gets no upstream: the socket just connected is destroyed.
 */
export function dialUpstream(
  port: () => number,
  client: net.Socket,
  deadline: number,
  gaveUp: () => void,
  connected: (upstream: net.Socket) => void,
): void {
  const dial = () => {
    const upstream = net.connect(port(), "127.0.0.1");
    const refused = () => {
      upstream.destroy();
      if (client.destroyed || Date.now() >= deadline) gaveUp();
      else setTimeout(dial, 100);
    };
    upstream.once("error", refused);
    upstream.once("connect", () => {
      upstream.off("error", refused);
      if (client.destroyed) upstream.destroy();
      else connected(upstream);
    });
  };
  dial();
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
export function withoutCompression(chunk: Buffer): Buffer {
  const text = chunk.toString("latin1");
  const stripped = text.replace(/\r\nsec-websocket-extensions:[^\r]*/i, "");
  return stripped === text ? chunk : Buffer.from(stripped, "latin1");
}
