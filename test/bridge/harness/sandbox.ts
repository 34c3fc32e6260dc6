import fs from "node:fs";
import { groupAlive, processAlive, signalGroup } from "../../../runner-bridge/src/proctree.ts";
import { readPid, runPaths } from "../../../runner-bridge/src/rundir.ts";
import type { Api } from "../../support/api.ts";
import { waitFor } from "../../support/wait.ts";
import type { BridgeProcess } from "./bridge.ts";

/**
 * The whole sandbox lost at once: the bridge, the supervisor and the agent's process group die
 * of SIGKILL, then the run directory and every other directory of the sandbox (the agent's
 * session files) are deleted.
 */
export async function wipeSandbox(bridge: BridgeProcess, dir: string, alsoDelete: string[] = []): Promise<void> {
  const paths = runPaths(dir);
  const supervisor = readPid(paths.supervisorPid);
  const agent = readPid(paths.agentPid);
  await bridge.kill9();
  if (supervisor !== null && processAlive(supervisor)) process.kill(supervisor, "SIGKILL");
  if (agent !== null && groupAlive(agent)) signalGroup(agent, "SIGKILL");
  await waitFor(
    "the supervisor and the agent to die of SIGKILL",
    () => (supervisor === null || !processAlive(supervisor)) && (agent === null || !groupAlive(agent)),
    5000,
  );
  for (const d of [dir, ...alsoDelete]) fs.rmSync(d, { recursive: true, force: true });
}

/**
 * The stored log, after checking that seq is gapless from 1, split into its streams, each in log
 * order: the runner's events as `[generation, sourceSeq, type]`, the control events' types, and
 * the checkpoints stored (`run.checkpoint`, how many depends on the bridge's timer). Where a
 * control event falls between runner events depends on timing; each stream's order does not.
 */
export async function transcript(api: Api, runId: string) {
  const events = await api.events(runId);
  const seqs = events.map((e) => e.seq);
  if (seqs.some((seq, i) => seq !== i + 1)) throw new Error(`seq is not gapless from 1: ${seqs.join(",")}`);
  const runner = events.filter((e) => e.source === "runner");
  return {
    events,
    runner,
    runnerRows: runner.map((e) => [e.generation ?? null, e.sourceSeq ?? null, e.type]),
    control: events.filter((e) => e.source !== "runner" && e.type !== "run.checkpoint").map((e) => e.type),
    checkpoints: events
      .filter((e) => e.type === "run.checkpoint")
      .map((e) => e.data as { digest: string; generation: number; sourceSeq: number; bytes: number }),
  };
}

/** Waits for the run to be recovering in `mode`. */
export function recovering(api: Api, runId: string, mode: string, timeoutMs = 20_000) {
  return waitFor(
    `run ${runId} to be recovering in mode ${mode}`,
    async () => {
      const run = await api.getRun(runId);
      return run.status === "recovering" && run.recovery?.mode === mode ? run : null;
    },
    timeoutMs,
  );
}

/** Waits for the run's checkpoint to cover `sourceSeq` of `generation`. */
export function checkpointCovering(api: Api, runId: string, generation: number, sourceSeq: number) {
  return waitFor(`a checkpoint of generation ${generation} covering sourceSeq ${sourceSeq}`, async () => {
    const { checkpoint } = await api.getRun(runId);
    return checkpoint && checkpoint.generation === generation && checkpoint.sourceSeq >= sourceSeq ? checkpoint : null;
  });
}
