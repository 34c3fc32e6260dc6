/** Payloads: AG-UI-shaped events of ~120 bytes, the size of a streamed text delta. */

const DELTA = "The quick brown fox jumps over the lazy dog; streaming tokens to a viewer. ";
export function agentEvent(i: number) {
  return { type: "TEXT_MESSAGE_CONTENT", data: { messageId: "m1", delta: DELTA, i } };
}
export function runnerEvent(sourceSeq: number) {
  const e = agentEvent(sourceSeq);
  return { sourceSeq, type: e.type, data: e.data };
}
