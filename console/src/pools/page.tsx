import "./pools.css";
import { useMemo } from "preact/hooks";
import { Api } from "../api.ts";
import { absoluteTime, relativeTime } from "../format.ts";
import { ProblemView } from "../problem.tsx";
import { onLinkClick, runPath } from "../route.ts";
import type { Credential } from "../session.ts";
import type { PoolHostInfo, QueueInfo } from "../../../src/protocol/index.ts";
import { usePoll } from "./use-poll.ts";

const REFRESH_MS = 2000;

/** The tenant's pool hosts (slots, profiles, the runs each holds) and its queues, refreshed every few seconds. */
export function PoolsPage({ credential, onSignIn }: { credential: Credential; onSignIn: () => void }) {
  const api = useMemo(() => new Api(credential), [credential.secret]);
  const pools = usePoll(() => Promise.all([api.pools(), api.queues()]), REFRESH_MS, [api]);
  const problem = pools.problem;
  if (problem) {
    return (
      <main class="page">
        <ProblemView error={problem} credential={credential} onSignIn={onSignIn} />
      </main>
    );
  }
  const [hostList, queueList] = pools.value ?? [null, null];
  const now = Date.now();
  return (
    <main class="page pools-page">
      <div class="list-head">
        <h1>Pools</h1>
        <span class="muted small refresh-note" role="status">
          {pools.stale ? "Server unreachable; showing the last answer" : "Updates every few seconds"}
        </span>
      </div>
      {hostList === null ? (
        <p class="loading" role="status">
          Loading pool hosts…
        </p>
      ) : (
        <>
          <h2>Hosts</h2>
          {hostList.hosts.length === 0 ? (
            <div class="card empty-state">
              <p>No pool host is connected. Runs created with an agent profile wait in their queue until one is.</p>
              <pre class="json">{"RUNNER_POOL_KEY=<pool key> npx runner-bridge pool --edge URL --slots 2"}</pre>
            </div>
          ) : (
            <HostsTable hosts={hostList.hosts} now={now} />
          )}
          <h2>Queues</h2>
          {queueList && queueList.queues.length > 0 ? (
            <QueuesTable queues={queueList.queues} />
          ) : (
            <p class="muted">No queues yet: a run created with an agent profile makes its queue.</p>
          )}
        </>
      )}
    </main>
  );
}

function HostsTable({ hosts, now }: { hosts: PoolHostInfo[]; now: number }) {
  return (
    <table class="runs card pool-hosts">
      <caption class="sr-only">Connected pool hosts</caption>
      <thead>
        <tr>
          <th scope="col">Host</th>
          <th scope="col">Queue</th>
          <th scope="col">Profiles</th>
          <th scope="col">Slots</th>
          <th scope="col">Connected</th>
          <th scope="col">Runs</th>
        </tr>
      </thead>
      <tbody>
        {hosts.map((host) => (
          <tr key={host.hostId} data-host-id={host.hostId}>
            <th scope="row">
              <code>{host.hostId}</code>
              {host.labels.length > 0 && <span class="muted small"> {host.labels.join(", ")}</span>}
            </th>
            <td>{host.queue}</td>
            <td>{host.profiles.join(", ")}</td>
            <td data-slots>
              {host.slots - host.freeSlots} of {host.slots} busy
            </td>
            <td>
              <time dateTime={host.connectedAt} title={absoluteTime(host.connectedAt)}>
                {relativeTime(host.connectedAt, now)}
              </time>
            </td>
            <td>
              {host.runs.length === 0 ? (
                <span class="muted">none</span>
              ) : (
                host.runs.map((run) => (
                  <span key={run.assignmentId} class="host-run">
                    <a href={runPath(run.runId)} onClick={onLinkClick}>
                      {run.runId}
                    </a>{" "}
                    <span class="muted small">
                      g{run.generation} {run.state}
                    </span>{" "}
                  </span>
                ))
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function QueuesTable({ queues }: { queues: QueueInfo[] }) {
  return (
    <table class="runs card pool-queues">
      <caption class="sr-only">Queues</caption>
      <thead>
        <tr>
          <th scope="col">Queue</th>
          <th scope="col">Waiting</th>
          <th scope="col">Running</th>
          <th scope="col">Limit</th>
          <th scope="col">Hosts</th>
          <th scope="col">Free slots</th>
        </tr>
      </thead>
      <tbody>
        {queues.map((queue) => (
          <tr key={queue.name} data-queue={queue.name}>
            <th scope="row">{queue.name}</th>
            <td>{queue.depth}</td>
            <td>{queue.running}</td>
            <td>{queue.maxConcurrent ?? <span class="muted">none</span>}</td>
            <td>{queue.hosts}</td>
            <td>{queue.freeSlots}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
