import { fail, type Result } from "../protocol/index.ts";

/**
 * Reads a request body, refusing it as soon as it passes `maxBytes`: a declared Content-Length
 * over the limit is refused before reading, and a body without one (chunked) stops being read
 * at the limit instead of being buffered whole.
 */
export async function readLimitedBody(request: Request, maxBytes: number): Promise<Result<Uint8Array>> {
  const tooLarge = () => fail("payload_too_large", `bodies are limited to ${maxBytes} bytes`);
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) return tooLarge();
  if (!request.body) return { ok: true, value: new Uint8Array(0) };
  // A declared length bounds what the runtime lets the body carry: read it whole, natively.
  if (request.headers.has("content-length")) {
    const whole = new Uint8Array(await request.arrayBuffer());
    return whole.byteLength > maxBytes ? tooLarge() : { ok: true, value: whole };
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return tooLarge();
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return { ok: true, value: body };
}
