import { agentEvent, claim, type SocketProbe } from "../../edge/sockets.ts";
import { call, createRun, DAY, KEY_B } from "../../edge/helpers.ts";
import { type CredentialName, credentialsFor } from "./credentials.ts";

/**
 * A run worth attacking: claimed by a runner, two events stored, an approval (`req-1`) pending
 * and a command queued; beside it another run of the same tenant and one of another tenant.
 * Deadlines are a day away, so no alarm changes it while it is fuzzed.
 */
export interface Fixture {
  runId: string;
  otherRunId: string;
  foreignRunId: string;
  credentials: Record<CredentialName, string | null>;
  runnerToken: string;
  viewerToken: string;
  runner: SocketProbe;
  epoch: number;
}

export const SLOW = { timeouts: { heartbeatMs: DAY, idleMs: DAY, takeoverMs: DAY, claimMs: DAY } };

export async function makeFixture(): Promise<Fixture> {
  const created = await createRun(SLOW);
  const runId = created.run.id;
  const { runner, epoch } = await claim(runId, created.runnerToken, "fuzz-fixture");
  const approval = { sourceSeq: 2, type: "approval.requested", data: { requestId: "req-1" } };
  runner.send({ type: "events", epoch, events: [agentEvent(1), approval] });
  await runner.next("ack");
  const queued = await call(`/v1/runs/${runId}/commands`, {
    method: "POST",
    json: { commandId: "queued-1", type: "input", text: "hello" },
  });
  if (queued.status !== 201) throw new Error(`fixture command: ${queued.status} ${await queued.text()}`);
  const other = await createRun(SLOW);
  const foreign = await createRun(SLOW, KEY_B);
  return {
    runId,
    otherRunId: other.run.id,
    foreignRunId: foreign.run.id,
    credentials: await credentialsFor(runId, other.run.id, created),
    runnerToken: created.runnerToken,
    viewerToken: created.viewerToken,
    runner,
    epoch,
  };
}

/** Replaces the run placeholders of a fuzzed path or id with the fixture's ids. */
export function resolveIds(text: string, fixture: Fixture): string {
  return text
    .replaceAll("{run}", fixture.runId)
    .replaceAll("{other}", fixture.otherRunId)
    .replaceAll("{foreign}", fixture.foreignRunId)
    .replaceAll("{missing}", "no-such-run");
}
