/** Times and durations as an operator reads them. */

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
  ["second", 1000],
];
const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "3 minutes ago", "in 25 seconds"; "just now" under five seconds. */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "—";
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return iso;
  const diff = at - now;
  if (Math.abs(diff) < 5000) return "just now";
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms || unit === "second") return relative.format(Math.round(diff / ms), unit);
  }
  return iso;
}

const absolute = new Intl.DateTimeFormat("en", {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

export function absoluteTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const at = Date.parse(iso);
  return Number.isFinite(at) ? absolute.format(at) : iso;
}

const clock = new Intl.DateTimeFormat("en", { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });

/** "14:03:07", for transcript rows. */
export function clockTime(iso: string): string {
  const at = Date.parse(iso);
  return Number.isFinite(at) ? clock.format(at) : iso;
}

/** "1h 4m", "12.3s", "—". */
export function duration(fromIso: string | null | undefined, toIso: string | null | undefined): string {
  if (!fromIso || !toIso) return "—";
  const ms = Date.parse(toIso) - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes}m ${Math.floor((ms % 60_000) / 1000)}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** Pretty JSON for display; never throws. */
export function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
