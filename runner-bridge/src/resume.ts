import path from "node:path";
import type { RecoveryState } from "../../src/protocol/index.ts";
import { ADAPTERS } from "./adapters/index.ts";
import { sessionIdProblem } from "./adapters/session-id.ts";
import { adapterForProvider, resumeLaunch } from "./adapters/resume.ts";
import type { ResumeArgs } from "./args.ts";
import { decodeArchive, digestOf } from "./checkpoint/archive.ts";
import { EdgeRefusal, type EdgeTarget, getCheckpoint, getRecovery } from "./checkpoint/edge-api.ts";
import { sessionPlaces } from "./checkpoint/files.ts";
import { restoreSession } from "./checkpoint/restore.ts";
import { BridgeExit, EXIT } from "./exit.ts";
import type { Logger } from "./logger.ts";
import { newNonce, type RunSpec } from "./rundir.ts";
import { programPath } from "./sandbox/plan.ts";

/**
 * `runner-bridge resume` up to the launch: reads the run's recovery state, refuses (exit 6) unless
 * it is recovering in mode resume, downloads and verifies the checkpoint, restores the session
 * files where the provider will look for them, and returns the spec of the next generation (the
 * provider's resume on its command line or in its environment, the generation to claim).
 */
export async function prepareResume(
  args: ResumeArgs,
  agentEnv: Record<string, string>,
  log: Logger,
  cwd = process.cwd(),
): Promise<{ spec: RunSpec; env: Record<string, string> }> {
  const target: EdgeTarget = { edge: args.edge, runId: args.runId, token: args.token };
  const state = await edgeCall("reading the run's recovery state", () => getRecovery(target));
  const native = state.nativeSession;
  if (state.status !== "recovering" || state.mode !== "resume" || !native || !state.checkpoint) {
    throw new BridgeExit(EXIT.notResumable, notResumable(args.runId, state));
  }
  const adapter = args.adapter ?? adapterForProvider(native.provider);
  if (!(ADAPTERS as readonly string[]).includes(adapter)) {
    throw new BridgeExit(EXIT.failure, `unknown adapter ${adapter} (one of ${ADAPTERS.join(", ")})`);
  }
  // The id came from the previous generation's output; it goes on the agent's command line.
  const idProblem = sessionIdProblem(adapter, native.id);
  if (idProblem) throw new BridgeExit(EXIT.failure, `refusing to resume run ${args.runId}: its ${idProblem}`);
  const download = await edgeCall("downloading the checkpoint", () => getCheckpoint(target));
  const digest = digestOf(download.bytes);
  if (digest !== download.digest || digest !== state.checkpoint.digest) {
    throw new BridgeExit(
      EXIT.failure,
      `the checkpoint's bytes hash to ${digest}, but the edge names ${download.digest || "no digest"} (recovery state: ${state.checkpoint.digest})`,
    );
  }
  const archive = decodeArchive(download.bytes);
  if (archive.session !== native.id) {
    throw new BridgeExit(
      EXIT.failure,
      `the checkpoint is of session ${JSON.stringify(archive.session.slice(0, 80))}, not the run's ${native.id}; nothing was restored`,
    );
  }
  const places = sessionPlaces(adapter, agentEnv, cwd, args.checkpoint);
  let restored: string[];
  try {
    restored = restoreSession(places, archive);
  } catch (err) {
    throw new BridgeExit(EXIT.failure, `refusing the checkpoint of run ${args.runId}: ${(err as Error).message}`);
  }
  log.info(
    `restored ${restored.length} session file(s) of ${native.provider} session ${native.id} (checkpoint ${digest.slice(0, 19)}…, sourceSeq ${download.sourceSeq} of generation ${download.generation})`,
  );

  const launch = resumeLaunch(adapter, native.id);
  const [program, ...commandArgs] = args.argv as [string, ...string[]];
  const command = programPath(program);
  const spec: RunSpec = {
    version: 1,
    runId: args.runId,
    adapter,
    command,
    args: [...commandArgs, ...launch.args],
    cwd,
    envNames: args.envNames,
    nonce: newNonce(),
    createdAt: new Date().toISOString(),
    generation: state.generation + 1,
    resume: native,
  };
  if (args.prompt !== undefined) spec.prompt = args.prompt;
  if (places.checkpointPath !== undefined) spec.checkpoint = path.resolve(places.checkpointPath);
  return { spec, env: { ...agentEnv, ...launch.env } };
}

function notResumable(runId: string, state: RecoveryState): string {
  const mode = state.mode ? ` in recovery mode ${state.mode}` : "";
  const missing =
    state.status === "recovering" && state.mode === "resume"
      ? `; it lacks ${state.nativeSession ? "a checkpoint" : "a native session"}`
      : "";
  return `not resumable: run ${runId} is ${state.status}${mode}${missing}; resume needs status recovering in mode resume (an operator may choose it: POST /v1/runs/${runId}/recover)`;
}

async function edgeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof EdgeRefusal && err.status === 404 && err.code === "not_found") {
      throw new BridgeExit(EXIT.unknownRun, `unknown-run: ${what}: ${err.message}`);
    }
    if (err instanceof EdgeRefusal && err.status === 410) {
      throw new BridgeExit(EXIT.terminalRun, `terminal-run: ${what}: ${err.message}`);
    }
    throw new BridgeExit(EXIT.failure, `${what} failed: ${(err as Error).message}`);
  }
}
