import net from "node:net";
import { dialUpstream, withoutCompression } from "../../support/proxy.ts";

/**
 * A loopback TCP proxy for the watch suite that breaks connections the ways networks do:
 * `cutMidFrame` forwards a server chunk only partway into the frame carrying a marker, then
 * destroys the connection (the client holds half a frame); `silence` keeps every open
 * connection up but carrying nothing (a NAT that forgot it); new connections dial the target
 * again every 100 ms for `holdMs`, so a server restart behind it is waited out, not refused;
 * `dropFrame` swallows one whole WebSocket frame and keeps the connection (frames lost in
 * between, which only a continuity check notices). Compression offers are struck from
 * handshakes so the server's frames cross as plain text.
 */
export interface CuttingProxy {
  url: string;
  /** Connections accepted so far. */
  accepted(): number;
  /** The next server chunk holding `marker` is forwarded up to a few bytes past it, then cut. */
  cutMidFrame(marker: string): { happened(): boolean };
  /** The next server WebSocket frame holding `marker` is not forwarded; the connection stays up. */
  dropFrame(marker: string): { happened(): boolean };
  /** Every open connection stops carrying bytes, both ways, without closing. */
  silence(): number;
  /** Destroys every open connection. */
  cutAll(): number;
  close(): Promise<void>;
}

export async function startCuttingProxy(targetPort: number, holdMs = 60_000): Promise<CuttingProxy> {
  const open = new Set<{ drop(): void; silence(): void }>();
  let accepted = 0;
  const every = new Set<net.Socket>();
  let armed: { marker: Buffer; fired: boolean } | null = null;
  let dropping: { marker: Buffer; fired: boolean } | null = null;
  const server = net.createServer((client) => {
    accepted++;
    every.add(client);
    const deadline = Date.now() + holdMs;
    let upstream: net.Socket | null = null;
    let silent = false;
    const connection = {
      drop() {
        client.destroy();
        upstream?.destroy();
        open.delete(connection);
      },
      silence() {
        silent = true;
        open.delete(connection);
      },
    };
    open.add(connection);
    client.pause();
    client.on("error", connection.drop);
    client.on("close", connection.drop);
    const relay = (up: net.Socket) => {
      client.on("data", (chunk: Buffer) => {
        if (!silent) up.write(withoutCompression(chunk));
      });
      const frames = new FrameSplitter();
      up.on("data", (incoming: Buffer) => {
        if (silent) return;
        const chunk = frames.pass(incoming, (frame) => {
          if (!dropping || dropping.fired || frame.indexOf(dropping.marker) < 0) return true;
          dropping.fired = true;
          return false;
        });
        const at = armed && !armed.fired ? chunk.indexOf(armed.marker) : -1;
        if (armed && at >= 0) {
          armed.fired = true;
          client.write(chunk.subarray(0, at + Math.min(3, armed.marker.length)), connection.drop);
          return;
        }
        client.write(chunk);
      });
      up.on("error", connection.drop);
      up.on("close", connection.drop);
      client.resume();
    };
    dialUpstream(
      () => targetPort,
      client,
      deadline,
      connection.drop,
      (up) => {
        upstream = up;
        relay(up);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    cutMidFrame(marker) {
      const shot = { marker: Buffer.from(marker), fired: false };
      armed = shot;
      return { happened: () => shot.fired };
    },
    dropFrame(marker) {
      const shot = { marker: Buffer.from(marker), fired: false };
      dropping = shot;
      return { happened: () => shot.fired };
    },
    silence() {
      const all = [...open];
      for (const connection of all) connection.silence();
      return all.length;
    },
    cutAll() {
      const all = [...open];
      for (const connection of all) connection.drop();
      return all.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of every) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Cuts a server's byte stream into WebSocket frames once it has answered 101, so frames can be
 * kept or dropped whole; anything else (plain HTTP) passes as it came. Server frames are unmasked.
 */
class FrameSplitter {
  private mode: "head" | "frames" | "plain" = "head";
  private pending = Buffer.alloc(0);

  pass(chunk: Buffer, keep: (frame: Buffer) => boolean): Buffer {
    // A keep-alive connection may carry plain answers before the upgrade (fetch and WebSocket
    // share a pool); the 101 then starts a chunk, since the upgrade waits for the answer before.
    if (this.mode === "plain" && chunk.subarray(0, 12).toString() === "HTTP/1.1 101") this.mode = "head";
    this.pending = Buffer.concat([this.pending, chunk]);
    const out: Buffer[] = [];
    if (this.mode === "head") {
      const end = this.pending.indexOf("\r\n\r\n");
      if (end < 0) return Buffer.alloc(0);
      this.mode = this.pending.subarray(0, 12).toString() === "HTTP/1.1 101" ? "frames" : "plain";
      out.push(this.pending.subarray(0, end + 4));
      this.pending = this.pending.subarray(end + 4);
    }
    if (this.mode === "plain") {
      out.push(this.pending);
      this.pending = Buffer.alloc(0);
      return Buffer.concat(out);
    }
    for (;;) {
      const size = frameSize(this.pending);
      if (size === null || this.pending.length < size) break;
      const frame = this.pending.subarray(0, size);
      if (keep(frame)) out.push(frame);
      this.pending = this.pending.subarray(size);
    }
    return Buffer.concat(out);
  }
}

function frameSize(data: Buffer): number | null {
  if (data.length < 2) return null;
  const second = data[1] ?? 0;
  const masked = (second & 0x80) !== 0 ? 4 : 0;
  const length = second & 0x7f;
  if (length < 126) return 2 + masked + length;
  if (length === 126) return data.length < 4 ? null : 4 + masked + data.readUInt16BE(2);
  return data.length < 10 ? null : 10 + masked + Number(data.readBigUInt64BE(2));
}
