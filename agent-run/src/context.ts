import type { CommandName, Values } from "./args.ts";
import type { Api } from "./client.ts";
import type { Paint } from "./format.ts";

/** What a command gets: the API client, its arguments and flags, and where to print. */
export interface Context {
  command: CommandName;
  api: Api;
  args: string[];
  values: Values;
  paint: Paint;
  print(text: string): void;
  /** One value as one line of JSON (--json). */
  json(value: unknown): void;
}
