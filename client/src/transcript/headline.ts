import { clip, fields, inline } from "./fields.ts";

const HEADLINE_FIELDS = ["command", "cmd", "query", "q", "pattern", "file_path", "filePath", "path", "url", "prompt"];

const word = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * The part of a tool call's arguments a reader looks for first: the command it runs, the file it
 * touches, what it searches; else the arguments as one line.
 */
export function toolHeadline(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    // JSON still streaming says nothing yet; other text is the arguments as they are
    return /^\s*[[{]/.test(args) ? "" : clip(args.replaceAll(/\s+/g, " ").trim(), 120);
  }
  const named = fields(parsed);
  for (const key of HEADLINE_FIELDS) {
    const value = named[key];
    if (typeof value === "string" && value !== "") return clip(value, 120);
    if (Array.isArray(value) && value.every((part) => typeof part === "string")) return clip(value.join(" "), 120);
  }
  if (Array.isArray(named.changes)) {
    const paths = named.changes.map((change) => word(fields(change).path)).filter((path) => path !== undefined);
    if (paths.length > 0) return clip(paths.join(", "), 120);
  }
  return Object.keys(named).length === 0 && !Array.isArray(parsed) && typeof parsed === "object"
    ? ""
    : clip(inline(parsed), 120);
}
