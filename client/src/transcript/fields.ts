/** An event's `data` as named fields; anything that is not a plain object has none. */
export type Fields = Record<string, unknown>;

export function fields(data: unknown): Fields {
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Fields) : {};
}

/** The value if it is a string. */
export function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function clip(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

/** One-line JSON (or the string itself). */
export function inline(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? "null";
  } catch {
    return String(value);
  }
}
