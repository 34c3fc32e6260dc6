/** `--output table|json|ndjson` for the commands that print lists (`--json` stays ndjson). */
import { stringValue, UsageError } from "./args.ts";
import type { Context } from "./context.ts";

export const OUTPUT_FORMATS = ["table", "json", "ndjson"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function outputFormat(ctx: Context): OutputFormat {
  const named = stringValue(ctx.values, "output");
  if (named === undefined) return ctx.values.json === true ? "ndjson" : "table";
  if (!(OUTPUT_FORMATS as readonly string[]).includes(named)) {
    throw new UsageError(`--output must be one of ${OUTPUT_FORMATS.join(", ")}, got ${named}`, ctx.command);
  }
  if (ctx.values.json === true && named !== "ndjson") {
    throw new UsageError(`--json means --output ndjson; give one of them`, ctx.command);
  }
  return named as OutputFormat;
}

/**
 * Where a list's items go: ndjson prints each as it comes (a long list streams), json holds them
 * for one array at the end, table hands them to the command's own renderer.
 */
export class ListOutput<T> {
  readonly format: OutputFormat;
  readonly rows: T[] = [];
  private readonly ctx: Context;
  constructor(ctx: Context) {
    this.ctx = ctx;
    this.format = outputFormat(ctx);
  }

  add(items: readonly T[]): void {
    if (this.format === "ndjson") for (const item of items) this.ctx.json(item);
    else this.rows.push(...items);
  }

  /** Prints what is held (json), or gives it to `table`. */
  finish(table: (rows: T[]) => void): void {
    if (this.format === "json") this.ctx.print(JSON.stringify(this.rows));
    else if (this.format === "table") table(this.rows);
  }
}
