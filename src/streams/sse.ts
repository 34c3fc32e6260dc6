/** Server-Sent Events framing for live stream reads (PROTOCOL §5.7). */
const encoder = new TextEncoder();

/**
 * One `data` event. Every line of the payload gets its own `data:` prefix, splitting on CRLF,
 * LF and CR alike, so payload bytes can never end the event or start another one.
 */
export function dataEvent(payload: string): Uint8Array {
  const lines = payload.split(/\r\n|\r|\n/);
  return encoder.encode(`event: data\n${lines.map((line) => `data:${line}`).join("\n")}\n\n`);
}

export interface ControlFields {
  streamNextOffset: string;
  streamCursor?: string;
  upToDate?: true;
  streamClosed?: true;
}

export function controlEvent(fields: ControlFields): Uint8Array {
  return encoder.encode(`event: control\ndata:${JSON.stringify(fields)}\n\n`);
}

export function base64(bytes: Uint8Array): string {
  let binary = "";
  const CHUNK = 0x8000;
  for (let at = 0; at < bytes.byteLength; at += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(at, at + CHUNK));
  }
  return btoa(binary);
}
