/** An event's `data` as named fields; anything that is not a plain object has none. */
export type Fields = Record<string, unknown>;

export function fields(data: unknown): Fields {
  return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Fields) : {};
}
