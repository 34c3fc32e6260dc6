import { useState } from "preact/hooks";
import type { RunRecord } from "../../../src/protocol/index.ts";
import type { Api } from "../api.ts";
import { copyText } from "./actions.tsx";

/** A record field naming where the run waits (`queue`, `pool`), as a string or `{name}`. */
function named(record: RunRecord, field: string): string | null {
  const value = (record as unknown as Record<string, unknown>)[field];
  if (typeof value === "string") return value;
  const name = (value as { name?: unknown } | null | undefined)?.name;
  return typeof name === "string" ? name : null;
}

/**
 * A queued run's page says how it will start: the queue or pool it waits for, when its record
 * names one, and the runner-bridge command that starts it by hand. The command's runner token is
 * minted when Copy is pressed and only ever goes to the clipboard, never onto the page.
 */
export function QueuedHint({ api, run, canMint }: { api: Api; run: RunRecord; canMint: boolean }) {
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (run.status !== "queued") return null;
  const queue = named(run, "queue");
  // A pool run names an agent profile as its agent (a string); a pool host serving it claims the run.
  const pool = named(run, "pool") ?? (queue && typeof run.agent === "string" ? run.agent : null);
  const command = (token: string) =>
    `RUNNER_BRIDGE_TOKEN=${token} npx runner-bridge run --edge ${location.origin} --run ${run.id} -- <agent command>`;
  const copy = () => {
    setBusy(true);
    setNote(null);
    api
      .mintToken(run.id, { role: "runner" })
      .then(({ token }) => copyText(command(token)))
      .then((copied) =>
        setNote(copied ? "Copied, with a fresh runner token. Paste it in the sandbox." : "The clipboard refused."),
      )
      .catch((error: unknown) => setNote(`Could not mint a runner token: ${(error as Error).message}`))
      .finally(() => setBusy(false));
  };
  return (
    <section class="queued-hint card" aria-label="How this run starts" data-queued-hint="">
      <h2>Waiting for a runner</h2>
      {(queue || pool) && (
        <p data-waits-for="">
          It waits in{" "}
          {queue ? (
            <>
              queue <code>{queue}</code>
            </>
          ) : null}
          {queue && pool ? " for " : null}
          {pool ? (
            <>
              agent profile <code>{pool}</code>
            </>
          ) : null}
          : a <code>runner-bridge pool</code> host serving it claims the run.
        </p>
      )}
      <p>{queue || pool ? "Or start" : "Start"} it by hand in the sandbox:</p>
      <pre class="json queued-command">{command("••••••••")}</pre>
      {canMint ? (
        <button type="button" class="button" onClick={copy} disabled={busy}>
          {busy ? "Minting…" : "Copy command with token"}
        </button>
      ) : (
        <p class="muted small">
          The runner token comes from whoever holds an API key: `agent-run token {run.id} --role runner`.
        </p>
      )}
      {note && (
        <p class="notice small" role="status">
          {note}
        </p>
      )}
      <p class="muted small">
        The first runner to say hello claims it. Unclaimed {Math.round(run.timeouts.claimMs / 60_000)} min after it was
        created, it times out.
      </p>
    </section>
  );
}
