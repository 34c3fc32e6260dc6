/** Small text helpers shared by the commands and the transcript. */

/** ANSI styling, or none (not a TTY, or NO_COLOR set). */
export interface Paint {
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
const same = (text: string) => text;

export const COLORS: Paint = {
  dim: sgr(2, 22),
  bold: sgr(1, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39),
  magenta: sgr(35, 39),
};
export const NO_COLORS: Paint = {
  dim: same,
  bold: same,
  red: same,
  green: same,
  yellow: same,
  cyan: same,
  magenta: same,
};

export function paintFor(stream: NodeJS.WriteStream): Paint {
  return stream.isTTY && !process.env.NO_COLOR ? COLORS : NO_COLORS;
}

/** One-line JSON, cut to `max` characters. */
export function compact(value: unknown, max = 160): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return clip(text.replace(/\s*\n\s*/g, " "), max);
}

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** 1h 02m, 3m 04s, 12s, 7d (a zero second unit is left out). */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const units: [number, string][] = [
    [Math.floor(s / 86400), "d"],
    [Math.floor((s % 86400) / 3600), "h"],
    [Math.floor((s % 3600) / 60), "m"],
    [s % 60, "s"],
  ];
  const first = units.findIndex(([n]) => n > 0);
  if (first === -1) return "0s";
  const [n, unit] = units[first] as [number, string];
  const next = units[first + 1];
  return next && next[0] > 0 ? `${n}${unit} ${String(next[0]).padStart(2, "0")}${next[1]}` : `${n}${unit}`;
}

/** "3m 04s ago", "in 23h 59m". */
export function relative(iso: string, now = Date.now()): string {
  const delta = Date.parse(iso) - now;
  if (Number.isNaN(delta)) return iso;
  return delta >= 0 ? `in ${duration(delta)}` : `${duration(-delta)} ago`;
}

/** HH:MM:SS of an ISO time, in local time. */
export function clock(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "--:--:--";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** Columns padded to the widest cell; the last column is not padded. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** `key  value` lines with the keys aligned. */
export function fields(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n");
}

/** The console page of a run, signed in through the fragment (never sent to a server). */
export function consoleLink(url: string, runId: string, token: string): string {
  return `${url}/runs/${encodeURIComponent(runId)}#token=${token}`;
}
