/** `agent-run`: the operator CLI. Parses, dispatches, and turns every failure into one stderr line. */
import {
  type CommandName,
  COMMANDS,
  commandUsage,
  EXIT,
  type ExitCode,
  intValue,
  DEFAULT_CHECK_MS,
  DEFAULT_GIVE_UP_MS,
  parseArgs,
  USAGE,
  UsageError,
} from "./args.ts";
import { Api, CliError } from "./client.ts";
import type { Context } from "./context.ts";
import { paintFor } from "./format.ts";
import { pools, queue, queues } from "./pools.ts";
import { completion } from "./completion.ts";
import { create, events, get, list, remove, token } from "./runs.ts";
import { tokenScope } from "./token-scope.ts";
import { VERSION } from "./version.ts";
import { recover } from "./recover.ts";
import { terminalJson, terminalText } from "./safe-text.ts";
import { cancel, decide, sendCommand } from "./steer.ts";
import { watchRun } from "./watch.ts";
import { webhooks } from "./webhooks.ts";

const HANDLERS: Record<CommandName, (ctx: Context) => Promise<ExitCode>> = {
  create,
  list,
  get,
  events,
  watch,
  // `logs ID` prints the log; `logs ID -f` follows it, as `watch` does.
  logs: (ctx) => (ctx.values.follow === true ? watch(ctx) : events(ctx)),
  completion,
  send: sendCommand,
  interrupt: sendCommand,
  cancel,
  approve: decide,
  deny: decide,
  recover,
  token,
  delete: remove,
  pools,
  queues,
  queue,
  webhooks,
};

function watch(ctx: Context): Promise<ExitCode> {
  return watchRun(ctx.api, ctx.args[0] as string, {
    after: intValue(ctx.values, "after", ctx.command) ?? 0,
    json: ctx.values.json === true,
    giveUpMs: intValue(ctx.values, "give-up-ms", ctx.command) ?? DEFAULT_GIVE_UP_MS,
    checkMs: intValue(ctx.values, "check-ms", ctx.command, 100) ?? DEFAULT_CHECK_MS,
  });
}

/** Commands that never call the API, so need no key. */
const OFFLINE: ReadonlySet<CommandName> = new Set(["completion"]);

export async function main(argv: string[]): Promise<ExitCode> {
  let command: CommandName | undefined;
  let key: string | undefined;
  let runArg: string | undefined;
  try {
    const parsed = parseArgs(argv);
    if (parsed.kind === "help") {
      process.stdout.write(`${parsed.command ? commandUsage(parsed.command) : USAGE}\n`);
      return EXIT.ok;
    }
    if (parsed.kind === "version") {
      process.stdout.write(`agent-run ${VERSION}\n`);
      return EXIT.ok;
    }
    command = parsed.command;
    key = parsed.key;
    // Only the commands that take a run name it first; list and completion take none.
    runArg = COMMANDS[command].args[0] === "ID" ? parsed.args[0] : undefined;
    if (!parsed.key && !OFFLINE.has(command)) {
      process.stderr.write(`agent-run: no API key: ${howToSetKey(parsed.url)}\n`);
      return EXIT.usage;
    }
    const ctx: Context = {
      command,
      // --json prints the answers exactly (terminalJson escapes what a terminal would act on).
      api: new Api(parsed.url, parsed.key ?? "", { forTerminal: parsed.values.json !== true }),
      args: parsed.args,
      values: parsed.values,
      paint: paintFor(process.stdout),
      print: (text) => process.stdout.write(`${text}\n`),
      json: (value) => process.stdout.write(`${terminalJson(value)}\n`),
    };
    return await HANDLERS[command](ctx);
  } catch (err) {
    if (err instanceof UsageError) {
      const usage = err.command ? commandUsage(err.command as CommandName) : USAGE;
      process.stderr.write(`agent-run: ${err.message}\n${usage}\n`);
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      const scope = err.status === 403 ? tokenScope(key, runArg) : "";
      process.stderr.write(`agent-run: ${err.code}: ${oneLine(err.message)}${scope}\n`);
      return EXIT.error;
    }
    process.stderr.write(`agent-run: internal: ${oneLine((err as Error)?.stack ?? String(err))}\n`);
    return EXIT.internal;
  }
}

function howToSetKey(url: string): string {
  const local = /^https?:\/\/(localhost|127\.0\.0\.1)(:|\/|$)/.test(url);
  const example = local ? "dev-key-alpha" : "<your API key>";
  const where = local ? " (the local server's keys are in .dev.vars)" : "";
  return `pass --key KEY or set AGENT_RUN_KEY, e.g. export AGENT_RUN_KEY=${example}${where}`;
}

/** An error's text on one line; a server's message may quote run data. */
function oneLine(text: string): string {
  return terminalText(text.replace(/\s*\n\s*/g, " | "));
}
