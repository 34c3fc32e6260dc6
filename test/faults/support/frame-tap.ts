/**
 * Reads the text frames the edge sends on each WebSocket connection through the proxy (its
 * `onServerData`), so a test knows what the edge said on the wire — e.g. the highest `ack` a
 * bridge was sent before the edge was killed. Plain HTTP responses before the upgrade (a bridge's
 * preflight may share the connection) are skipped. Server frames are unmasked and, through the
 * proxy, uncompressed.
 */
export class ServerFrameTap {
  private readonly connections = new Map<number, { pending: Buffer; upgraded: boolean; parts: Buffer[] }>();
  private readonly onText: (text: string, connection: number) => void;

  constructor(onText: (text: string, connection: number) => void) {
    this.onText = onText;
  }

  feed(connection: number, chunk: Buffer): void {
    let state = this.connections.get(connection);
    if (!state) {
      state = { pending: Buffer.alloc(0), upgraded: false, parts: [] };
      this.connections.set(connection, state);
    }
    state.pending = Buffer.concat([state.pending, chunk]);
    if (!state.upgraded) {
      const start = state.pending.indexOf("HTTP/1.1 101 ");
      const end = start < 0 ? -1 : state.pending.indexOf("\r\n\r\n", start);
      if (end < 0) {
        // Keep only a tail long enough to hold a status line split across chunks.
        if (start < 0) state.pending = state.pending.subarray(Math.max(0, state.pending.length - 16));
        return;
      }
      state.upgraded = true;
      state.pending = state.pending.subarray(end + 4);
    }
    for (;;) {
      const frame = nextFrame(state.pending);
      if (!frame) return;
      state.pending = state.pending.subarray(frame.length);
      if (frame.opcode !== 0x1 && frame.opcode !== 0x0) continue; // close, ping, pong, binary
      state.parts.push(frame.payload);
      if (!frame.fin) continue;
      const text = Buffer.concat(state.parts).toString("utf8");
      state.parts = [];
      this.onText(text, connection);
    }
  }
}

/** The highest sourceSeq the edge acknowledged to a bridge through the proxy, read off the wire. */
export class AckWatch {
  highest = 0;
  private readonly tap = new ServerFrameTap((text) => {
    if (text.startsWith('{"type":"ack"')) this.highest = Math.max(this.highest, JSON.parse(text).highestSourceSeq);
  });
  /** The proxy's `onServerData`. */
  readonly feed = (connection: number, chunk: Buffer): void => this.tap.feed(connection, chunk);
}

function nextFrame(buffer: Buffer): { fin: boolean; opcode: number; payload: Buffer; length: number } | null {
  if (buffer.length < 2) return null;
  const first = buffer[0] as number;
  const second = buffer[1] as number;
  let size = second & 0x7f;
  let at = 2;
  if (size === 126) {
    if (buffer.length < 4) return null;
    size = buffer.readUInt16BE(2);
    at = 4;
  } else if (size === 127) {
    if (buffer.length < 10) return null;
    size = Number(buffer.readBigUInt64BE(2));
    at = 10;
  }
  if (second & 0x80) at += 4; // a mask key (never from a server, but skip it if present)
  if (buffer.length < at + size) return null;
  return {
    fin: (first & 0x80) !== 0,
    opcode: first & 0x0f,
    payload: buffer.subarray(at, at + size),
    length: at + size,
  };
}
