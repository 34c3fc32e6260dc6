/** `recover`: an operator's decision for a run whose sandbox was lost. */
import { RecoverBody, type RecoverAccepted } from "../../src/protocol/index.ts";
import { EXIT, type ExitCode, invalidUsage } from "./args.ts";
import { runPath } from "./client.ts";
import type { Context } from "./context.ts";
import { commandId, retrySafely } from "./steer.ts";

const NEXT_STEP = {
  resume: "start `runner-bridge resume --edge URL --run ID -- AGENT…` (RUNNER_BRIDGE_TOKEN set) on a new sandbox",
  restart: "the next `runner-bridge run` for this run starts the agent over",
  fail: "the run is failed (recovery_declined)",
} as const;

export async function recover(ctx: Context): Promise<ExitCode> {
  const [runId, action] = ctx.args as [string, string];
  const id = commandId(ctx);
  const parsed = RecoverBody.safeParse({ action, commandId: id });
  if (!parsed.success) throw invalidUsage(parsed.error, ctx.command);
  const { body } = await retrySafely(id, () =>
    ctx.api.call<RecoverAccepted>("POST", runPath(runId, "/recover"), parsed.data),
  );
  if (ctx.values.json) {
    ctx.json(body);
    return EXIT.ok;
  }
  const chosen = body.decision.action;
  const head = body.created
    ? `${chosen} chosen for ${runId} · command ${body.decision.commandId}`
    : `${chosen} was already chosen for ${runId} as command ${body.decision.commandId} (not decided twice)`;
  ctx.print(`${head} · run ${body.run.status}; ${NEXT_STEP[chosen].replace("ID", runId)}`);
  return EXIT.ok;
}
