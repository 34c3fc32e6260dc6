/**
 * `watch`: follows a run until it ends, through the SDK's watch (exactly once and gapless across
 * drops), and renders what it yields. Only the rendering, the exit codes and Ctrl-C are the CLI's.
 */
import { watchRun as sdkWatch } from "@agent-run/client";
import { isTerminal, type RunEvent, type RunStatus } from "../../src/protocol/index.ts";
import { EXIT, type ExitCode } from "./args.ts";
import { type Api, CliError } from "./client.ts";
import { paintFor } from "./format.ts";
import { terminalText, terminalValue } from "./safe-text.ts";
import { jsonView, plainView, ttyView, type View } from "./views.ts";

export interface WatchOptions {
  after: number;
  json: boolean;
  /** Stop reconnecting after this long without a working connection. */
  giveUpMs: number;
  /** How often to check over HTTP that the socket is still delivering the log. */
  checkMs: number;
}

const OUTCOME_EXIT: Record<string, ExitCode> = {
  succeeded: EXIT.ok,
  failed: EXIT.failed,
  cancelled: EXIT.cancelled,
  timed_out: EXIT.timedOut,
};

export async function watchRun(api: Api, runId: string, options: WatchOptions): Promise<ExitCode> {
  // Verdicts (unknown run, bad key, purged) come from one plain request before anything is shown.
  const run = await api.getRun(runId);
  const viewOptions = {
    runId,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
    status: run.status,
    after: options.after,
    paint: paintFor(process.stdout),
    out: process.stdout,
    err: process.stderr,
  };
  const view: View = options.json
    ? jsonView(viewOptions)
    : process.stdout.isTTY
      ? ttyView(viewOptions)
      : plainView(viewOptions);
  let finished = false;
  const onSigint = () => {
    view.finish(null);
    process.exit(EXIT.interrupted);
  };
  process.once("SIGINT", onSigint);
  const safe = <T>(value: T): T => (api.forTerminal ? (terminalValue(value) as T) : value);
  try {
    const updates = sdkWatch(api.client, runId, {
      after: options.after,
      giveUpMs: options.giveUpMs,
      checkMs: options.checkMs,
    });
    for await (const update of updates) {
      if (update.type === "event") view.event(safe(update.event) as RunEvent);
      else if (update.type === "status") view.status(safe(update.status));
      else if (update.type === "connection")
        view.connection(update.reason === null ? null : terminalText(update.reason), update.lastSeq);
      else {
        const status: RunStatus = update.run.status;
        const exit = OUTCOME_EXIT[status];
        // The watch ends only on a terminal record; anything else is a server fault, said as one.
        if (exit === undefined) {
          throw new CliError("bad_response", `the server ended the watch of ${runId} with status ${status}`);
        }
        finished = true;
        view.finish(status);
        return exit;
      }
    }
    throw new CliError("bad_response", `the watch of ${runId} ended without the run's record`);
  } finally {
    process.off("SIGINT", onSigint);
    if (!finished) view.finish(null);
  }
}

export function exitForStatus(status: RunStatus): ExitCode | null {
  return isTerminal(status) ? (OUTCOME_EXIT[status] ?? EXIT.error) : null;
}
