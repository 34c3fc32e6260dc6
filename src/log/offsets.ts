/**
 * Log positions and their wire form.
 *
 * A position names the boundary after entry `seq`; `pos` is the number of body bytes stored in
 * entries 1..seq. The wire token is both numbers, zero-padded to 16 digits and joined by "_", so
 * tokens sort lexicographically in log order, contain only URL-safe characters, and the start of
 * every log is `0000000000000000_0000000000000000`. The protocol sentinels `-1` (start) and `now`
 * (tail) are never produced as tokens.
 */
export interface LogPosition {
  /** Entries 1..seq lie before this position. */
  seq: number;
  /** Body bytes of entries 1..seq. */
  pos: number;
}

export const LOG_START: LogPosition = { seq: 0, pos: 0 };

const WIDTH = 16;
const TOKEN = /^(\d{16})_(\d{16})$/;

export function encodeOffset(position: LogPosition): string {
  return `${String(position.seq).padStart(WIDTH, "0")}_${String(position.pos).padStart(WIDTH, "0")}`;
}

/** What a client asked to read from. `at` still has to be checked against the log. */
export type OffsetRef = { kind: "start" } | { kind: "now" } | { kind: "at"; seq: number; pos: number };

/** Parses `-1`, `now` or a token of ours; null for anything else. */
export function parseOffset(token: string): OffsetRef | null {
  if (token === "-1") return { kind: "start" };
  if (token === "now") return { kind: "now" };
  const match = TOKEN.exec(token);
  if (!match) return null;
  return { kind: "at", seq: Number(match[1]), pos: Number(match[2]) };
}
