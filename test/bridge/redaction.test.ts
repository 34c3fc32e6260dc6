import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { FIXTURES, journalLines, NODE, runArgs, tempDir } from "./harness/bridge.ts";
import { marker, touch, useEdge } from "./harness/context.ts";
import { custom, textLine } from "./harness/ndjson-events.ts";

const t = useEdge();

describe("secrets in the agent's output", () => {
  it("an agent that runs env: the --env values and the runner token are redacted before the journal and every event", async () => {
    const secret = `sk-live-${randomUUID()}`;
    const quoted = `pa"ss\\word-${randomUUID()}`; // JSON spells it pa\"ss\\word-…
    const tokenFile = path.join(tempDir("leak-"), "token.txt");
    const paused = marker("paused");
    const go = marker("go");
    const script = path.join(tempDir("agent-script-"), "script.json");
    fs.writeFileSync(
      script,
      JSON.stringify([{ envEcho: ["QUOTED"] }, { printFile: tokenFile }, { touch: paused }, { waitFile: go }]),
    );
    // The agent is a shell that prints its whole environment, then the scripted agent.
    const agent = ["/bin/sh", "-c", `env; exec "${NODE}" "${path.join(FIXTURES, "scripted-agent.mjs")}" "${script}"`];
    const created = await t.api.createRun();
    fs.writeFileSync(tokenFile, `my token is ${created.runnerToken}`);
    const dir = t.runDir();
    const bridge = t.bridge(
      runArgs({
        edge: t.edge.url,
        runId: created.run.id,
        token: created.runnerToken,
        dir,
        extra: ["--env", "SECRET_TOKEN", "--env", "QUOTED"],
        agent,
      }),
      { env: { SECRET_TOKEN: secret, QUOTED: quoted } },
    );
    await waitFor("the agent to pause", () => fs.existsSync(paused));
    const leaks = [secret, quoted, JSON.stringify(quoted).slice(1, -1), created.runnerToken];

    const journal = fs.readFileSync(path.join(dir, "journal.ndjson"), "utf8");
    for (const leak of leaks) expect(journal).not.toContain(leak);
    const lines = journalLines(dir);
    expect(lines).toContain("SECRET_TOKEN=[redacted]");
    expect(lines).toContain(`QUOTED=[redacted]`);
    expect(lines.slice(-2)).toEqual([
      JSON.stringify({ type: "env.echo", vars: { QUOTED: "[redacted]" } }),
      JSON.stringify({ type: "file.report", path: tokenFile, text: "my token is [redacted]" }),
    ]);
    const envLines = lines.length - 2;

    touch(go);
    expect(await bridge.waitExit()).toBe(0);
    const events = await t.api.runnerEvents(created.run.id);
    expect(events).toHaveLength(lines.length);
    const at = lines.indexOf("SECRET_TOKEN=[redacted]");
    expect(events[at]).toEqual(textLine(at + 1, "SECRET_TOKEN=[redacted]", 1));
    expect(events.slice(-2)).toEqual([
      custom(envLines + 1, "env.echo", { vars: { QUOTED: "[redacted]" } }),
      custom(envLines + 2, "file.report", { path: tokenFile, text: "my token is [redacted]" }),
    ]);
    const stored = JSON.stringify([await t.api.events(created.run.id), await t.api.getRun(created.run.id)]);
    for (const leak of [secret, quoted, created.runnerToken]) expect(stored).not.toContain(leak);
  });
});
