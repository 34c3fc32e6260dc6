import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { onPath } from "../../runner-bridge/src/sandbox/check.ts";
import { waitFor } from "../support/wait.ts";
import { FIXTURES, NODE, runArgs, tempDir } from "./harness/bridge.ts";
import { useEdge } from "./harness/context.ts";
import { REPO } from "./harness/edge.ts";
import { custom } from "./harness/ndjson-events.ts";

// The OS sandbox (--sandbox os): a fixture agent tries each way out of it and reports every
// attempt as an event; each must fail, and the run still ends with exactly those events.

const t = useEdge();
const varTmpDirs: string[] = [];
afterAll(() => {
  for (const dir of varTmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Every command line on the host that contains `needle` (the bridge's, the supervisor's, bwrap's, the agent's). */
function commandLinesWith(needle: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes(needle)) found.push(`${pid}: ${cmdline.replaceAll("\0", " ")}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The straggler's own process (its command line; the plan naming it is on the agent's too). */
const stragglers = (marker: string) => commandLinesWith(marker).filter((line) => line.includes("process.on('SIGTERM'"));

/**
 * A host whose HOME holds a private key and a .bashrc, as an operator's machine would. Outside
 * /tmp (which the sandbox replaces), so the agent sees it, read-only.
 */
function hostHomeWithKey(): { home: string; key: string; bashrc: string } {
  const home = fs.mkdtempSync("/var/tmp/host-home-");
  varTmpDirs.push(home);
  fs.mkdirSync(path.join(home, ".ssh"), { mode: 0o700 });
  const key = `-----BEGIN OPENSSH PRIVATE KEY----- ${randomUUID()}`;
  fs.writeFileSync(path.join(home, ".ssh", "id_rsa"), key, { mode: 0o600 });
  const bashrc = "export PATH=$PATH\n";
  fs.writeFileSync(path.join(home, ".bashrc"), bashrc);
  return { home, key, bashrc };
}

/** Another run's files and HOME in a `.runner-bridge/` directory, as the default layout keeps them. */
function plantOtherRun(root: string): string {
  const other = path.join(root, "other-run");
  fs.mkdirSync(other, { recursive: true });
  fs.writeFileSync(path.join(other, "journal.ndjson"), '{"type":"other"}\n');
  fs.mkdirSync(`${other}.home`);
  fs.writeFileSync(path.join(`${other}.home`, "secret"), "other run's session");
  return other;
}

/** The bridge's HOME as the test planted it: no file added, none changed. */
function expectHostHomeUntouched(host: { home: string; key: string; bashrc: string }) {
  expect(fs.readdirSync(host.home).sort()).toEqual([".bashrc", ".ssh"]);
  expect(fs.readdirSync(path.join(host.home, ".ssh"))).toEqual(["id_rsa"]);
  expect(fs.readFileSync(path.join(host.home, ".ssh", "id_rsa"), "utf8")).toBe(host.key);
  expect(fs.readFileSync(path.join(host.home, ".bashrc"), "utf8")).toBe(host.bashrc);
}

/** The agent's own HOME after a run: its write, and its credential paths only as the empty placeholders that masked them. */
function expectOwnHome(home: string) {
  expect(fs.readFileSync(path.join(home, "written-inside"), "utf8")).toBe("escaped");
  expect(fs.readdirSync(path.join(home, ".ssh"))).toEqual([]);
  expect(fs.readdirSync(path.join(home, ".aws"))).toEqual([]);
  expect(fs.readFileSync(path.join(home, ".netrc"), "utf8")).toBe("");
}

/** `runner-bridge run --sandbox os` on a fresh run with the escape agent; the token only in a --token-file. */
async function startEscapeRun(options: {
  network?: string;
  finally: "exit" | "wait";
  allowed?: { host: string; port: number };
  env?: Record<string, string>;
  extra?: string[];
  body?: Record<string, unknown>;
  /** No --dir: the run's files in `.runner-bridge/<run>/` of a fresh cwd, beside another run's. */
  defaultLayout?: boolean;
  /** How the bridge gets its token: a --token-file (default), or RUNNER_BRIDGE_TOKEN as a pool passes it. */
  tokenVia?: "file" | "env";
}) {
  const created = await t.api.createRun(options.body);
  const cwd = options.defaultLayout ? fs.mkdtempSync("/var/tmp/bridge-cwd-") : undefined;
  if (cwd) varTmpDirs.push(cwd);
  const dir = cwd ? path.join(cwd, ".runner-bridge", created.run.id) : t.runDir();
  const otherRun = cwd ? plantOtherRun(path.join(cwd, ".runner-bridge")) : undefined;
  const workspace = tempDir("workspace-");
  // Outside /tmp (which the sandbox replaces), so the agent sees it and finds it read-only.
  const otherWorkspace = fs.mkdtempSync("/var/tmp/other-workspace-");
  varTmpDirs.push(otherWorkspace);
  const host = hostHomeWithKey();
  const straggler = `straggler-${randomUUID()}`;
  // Outside /tmp too: the agent sees the directory, and must find the file itself masked.
  const tokenDir = fs.mkdtempSync("/var/tmp/runner-token-");
  varTmpDirs.push(tokenDir);
  const tokenFile = path.join(tokenDir, "token");
  const viaEnv = options.tokenVia === "env";
  if (!viaEnv) fs.writeFileSync(tokenFile, created.runnerToken, { mode: 0o600 });
  const plan = {
    runDir: dir,
    tokenFile,
    bridgePid: 0,
    bridgeDir: path.join(REPO, "runner-bridge"),
    otherWorkspace,
    hostHome: host.home,
    edgePort: Number(new URL(t.edge.url).port),
    straggler,
    finally: options.finally,
    ...(options.allowed ? { allowed: options.allowed } : {}),
    ...(otherRun ? { otherRun } : {}),
  };
  // The bridge's pid is only known once it runs; the agent looks for it in a plan file it reads at start.
  const args = runArgs({
    edge: t.edge.url,
    runId: created.run.id,
    token: "unused",
    dir,
    extra: [
      "--sandbox",
      "os",
      "--workspace",
      workspace,
      ...(options.network ? ["--network", options.network] : []),
      ...(options.extra ?? []),
    ],
    agent: [NODE, path.join(FIXTURES, "escape-agent.mjs"), "PLAN"],
  });
  const tokenAt = args.indexOf("--token");
  args.splice(tokenAt, 2, ...(viaEnv ? [] : ["--token-file", tokenFile]));
  if (cwd) args.splice(args.indexOf("--dir"), 2);
  const bridge = t.bridge(
    args.map((a) => (a === "PLAN" ? JSON.stringify(plan) : a)),
    {
      env: { HOME: host.home, ...(viaEnv ? { RUNNER_BRIDGE_TOKEN: created.runnerToken } : {}), ...options.env },
      ...(cwd ? { cwd } : {}),
    },
  );
  return { ...created, dir, otherRun, workspace, otherWorkspace, host, tokenFile, straggler, bridge };
}

/**
 * `runner-bridge run --sandbox os` on a fresh run, with `agent` as the agent's command and `extra`
 * flags after --sandbox; `cwd` and `env` for the bridge process.
 */
async function sandboxedBridge(options: {
  agent: string[];
  extra?: string[];
  cwd?: string;
  env?: Record<string, string>;
}) {
  const created = await t.api.createRun();
  const dir = t.runDir();
  const args = runArgs({
    edge: t.edge.url,
    runId: created.run.id,
    token: created.runnerToken,
    dir,
    extra: ["--sandbox", "os", ...(options.extra ?? [])],
    agent: options.agent,
  });
  const bridge = t.bridge(args, {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
  });
  return { ...created, dir, bridge };
}

const blocked = (sourceSeq: number, attempt: string) => custom(sourceSeq, "escape.attempt", { attempt, blocked: true });
const allowedEvent = (sourceSeq: number, what: string) => custom(sourceSeq, "sandbox.allowed", { what, ok: true });

const LOCAL_ATTEMPTS = [
  "read the bridge's cmdline",
  "read the bridge's environ",
  "find the token in any process",
  "read the --token-file",
  "read the run spec",
  "read the journal",
  "append to the journal",
  "append to the inbox",
  "delete the run spec",
  "delete the run directory",
  "write /etc",
  "write the bridge's directory",
  "write another run's workspace",
  "remount / read-write",
  "unmount the mask over the run directory",
  "mount a tmpfs",
  "open kernel.core_pattern for writing",
];

const HOME_ATTEMPTS = [
  "create ~/.ssh/authorized_keys in the bridge's HOME",
  "create ~/.aws/credentials in the bridge's HOME",
  "append to ~/.bashrc in the bridge's HOME",
  "create ~/.ssh/authorized_keys in its own HOME",
  "create ~/.aws/credentials in its own HOME",
  "write ~/.netrc in its own HOME",
];

/** The events of attempts 1–4 and the two things the agent may do, from sourceSeq 1. */
function localTranscript() {
  const events = LOCAL_ATTEMPTS.map((a, i) => blocked(i + 1, a));
  let seq = events.length;
  events.push(allowedEvent(++seq, "write the workspace"), allowedEvent(++seq, "write HOME"));
  events.push(blocked(++seq, "read ~/.ssh/id_rsa"));
  for (const attempt of HOME_ATTEMPTS) events.push(blocked(++seq, attempt));
  events.push(blocked(++seq, "connect to the edge's port"));
  return events;
}

describe("--sandbox os", () => {
  it("every way out fails (token, run files, writes, ~/.ssh, the edge, a straggler) and the run succeeds with its exact transcript", async () => {
    const run = await startEscapeRun({ finally: "exit" });
    expect(await run.bridge.waitExit()).toBe(0);
    const expected = localTranscript();
    expected.push(custom(expected.length + 1, "straggler.started", {}));
    expect(await t.api.runnerEvents(run.run.id)).toEqual(expected);
    expect(await t.api.getRun(run.run.id)).toMatchObject({
      status: "succeeded",
      outcome: { status: "succeeded", exitCode: 0 },
    });

    // Only the workspace and HOME took the agent's writes; nothing else of the host changed.
    expect(fs.readFileSync(path.join(run.workspace, "written-inside"), "utf8")).toBe("escaped");
    // HOME is the run's own, beside its run directory; the bridge's HOME is as it was.
    expectOwnHome(`${run.dir}.home`);
    expectHostHomeUntouched(run.host);
    expect(fs.existsSync("/etc/runner-bridge-escape")).toBe(false);
    expect(fs.existsSync(path.join(REPO, "runner-bridge", "escape"))).toBe(false);
    expect(fs.readdirSync(run.otherWorkspace)).toEqual([]);
    expect(fs.readFileSync(run.tokenFile, "utf8")).toBe(run.runnerToken);
    // The run ended, so nothing of its sandbox is left, not even the setsid child that ignores SIGTERM.
    await waitFor("the straggler to be gone with its sandbox", () => stragglers(run.straggler).length === 0, 5000);
    expect(fs.existsSync(run.dir)).toBe(false);
  });

  it("--home DIR is the agent's HOME: its writes land there, and its absent credential paths are masked too", async () => {
    const home = fs.mkdtempSync("/var/tmp/agent-home-");
    varTmpDirs.push(home);
    const run = await startEscapeRun({ finally: "exit", extra: ["--home", home] });
    expect(await run.bridge.waitExit()).toBe(0);
    const expected = localTranscript();
    expected.push(custom(expected.length + 1, "straggler.started", {}));
    expect(await t.api.runnerEvents(run.run.id)).toEqual(expected);
    expectOwnHome(home);
    expect(fs.existsSync(`${run.dir}.home`)).toBe(false);
    expectHostHomeUntouched(run.host);
  });

  it("in the default layout the agent sees none of .runner-bridge/ but its own HOME there, <run>.home", async () => {
    const run = await startEscapeRun({ finally: "exit", defaultLayout: true });
    expect(await run.bridge.waitExit()).toBe(0);
    const expected = localTranscript();
    let seq = expected.length;
    expected.push(
      blocked(++seq, "read another run's journal"),
      blocked(++seq, "read another run's HOME"),
      custom(++seq, "straggler.started", {}),
    );
    expect(await t.api.runnerEvents(run.run.id)).toEqual(expected);
    expectOwnHome(`${run.dir}.home`);
    expectHostHomeUntouched(run.host);
    expect(fs.existsSync(run.dir)).toBe(false);
    expect(fs.readdirSync(path.dirname(run.dir)).sort()).toEqual(
      ["other-run", "other-run.home", `${run.run.id}.home`].sort(),
    );
  });

  it("cancel ends every process inside; the token and --env values are on no command line, inside or out", async () => {
    const secret = `sk-sandbox-${randomUUID()}`;
    const run = await startEscapeRun({
      finally: "wait",
      tokenVia: "env",
      env: { AGENT_SECRET: secret },
      extra: ["--env", "AGENT_SECRET"],
    });
    const expected = localTranscript();
    expected.push(custom(expected.length + 1, "straggler.started", {}), custom(expected.length + 2, "ready", {}));
    await waitFor(
      "the agent to report ready",
      async () => (await t.api.runnerEvents(run.run.id)).length === expected.length,
    );
    expect(stragglers(run.straggler)).toHaveLength(1);
    expect(commandLinesWith(run.runnerToken)).toEqual([]);
    expect(commandLinesWith(secret)).toEqual([]);

    await t.api.cancel(run.run.id);
    expect(await run.bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.run.id)).toEqual(expected);
    expect((await t.api.getRun(run.run.id)).status).toBe("cancelled");
    expect(stragglers(run.straggler)).toEqual([]);
    expect(fs.existsSync(run.dir)).toBe(false);
  });

  it("the run deadline ends every process inside too, and the run is timed_out with the same transcript", async () => {
    const run = await startEscapeRun({ finally: "wait", body: { timeouts: { runMs: 4000 } } });
    const expected = localTranscript();
    expected.push(custom(expected.length + 1, "straggler.started", {}), custom(expected.length + 2, "ready", {}));
    expect(await run.bridge.waitExit(30_000)).toBe(0);
    expect(await t.api.runnerEvents(run.run.id)).toEqual(expected);
    expect((await t.api.getRun(run.run.id)).status).toBe("timed_out");
    expect(stragglers(run.straggler)).toEqual([]);
    expect(fs.existsSync(run.dir)).toBe(false);
  });

  it("--network allow: reaches a listed host through the proxy, neither it directly nor the unlisted edge", async () => {
    const listed = http.createServer((_req, res) => res.end("listed"));
    await new Promise<void>((resolve) => listed.listen(0, "127.0.0.1", resolve));
    const port = (listed.address() as AddressInfo).port;
    try {
      const run = await startEscapeRun({
        network: "allow:localhost",
        finally: "exit",
        allowed: { host: "localhost", port },
      });
      expect(await run.bridge.waitExit()).toBe(0);
      const expected = localTranscript();
      let seq = expected.length;
      expected.push(
        blocked(++seq, "connect to the listed host directly"),
        blocked(++seq, "the edge through the proxy"),
        blocked(++seq, "the edge by a listed name through the proxy"),
        allowedEvent(++seq, "the listed host through the proxy"),
        custom(++seq, "straggler.started", {}),
      );
      expect(await t.api.runnerEvents(run.run.id)).toEqual(expected);
      expect((await t.api.getRun(run.run.id)).status).toBe("succeeded");
    } finally {
      listed.close();
    }
  });

  it("a program named by a relative path is the one beside the bridge; the agent starts in its workspace", async () => {
    // Not under /tmp, which the sandbox replaces with its own.
    const here = fs.mkdtempSync("/var/tmp/bridge-cwd-");
    varTmpDirs.push(here);
    fs.writeFileSync(path.join(here, "agent.sh"), `#!/bin/sh\nprintf '{"type":"started.in","cwd":"%s"}\\n' "$PWD"\n`, {
      mode: 0o755,
    });
    const workspace = tempDir("workspace-");
    const { run, bridge } = await sandboxedBridge({
      extra: ["--workspace", workspace],
      agent: ["./agent.sh"],
      cwd: here,
    });
    expect(await bridge.waitExit()).toBe(0);
    expect(await t.api.runnerEvents(run.id)).toEqual([custom(1, "started.in", { cwd: workspace })]);
  });

  it("an agent installed under the host's /tmp sees its own tree there, read-only, and nothing else of the host's /tmp", async () => {
    // A package under /tmp, as a repository cloned there is: a program and a file beside it.
    const installed = fs.mkdtempSync("/tmp/agent-install-");
    const unrelated = fs.mkdtempSync("/tmp/unrelated-");
    try {
      fs.mkdirSync(path.join(installed, "bin"));
      fs.mkdirSync(path.join(installed, "lib"));
      fs.writeFileSync(path.join(installed, "lib", "data.txt"), "beside the program");
      fs.writeFileSync(path.join(unrelated, "secret"), "another program's file");
      const script = [
        "#!/bin/sh",
        `data=$(cat ${installed}/lib/data.txt)`,
        `if echo x > ${installed}/lib/written 2>/dev/null; then wrote=yes; else wrote=no; fi`,
        `if [ -e ${unrelated}/secret ]; then other=visible; else other=hidden; fi`,
        `printf '{"type":"looked","data":"%s","wrote":"%s","other":"%s"}\\n' "$data" "$wrote" "$other"`,
      ].join("\n");
      fs.writeFileSync(path.join(installed, "bin", "agent.sh"), `${script}\n`, { mode: 0o755 });
      const { run, bridge } = await sandboxedBridge({
        extra: ["--workspace", tempDir("workspace-")],
        agent: [path.join(installed, "bin", "agent.sh")],
      });
      expect(await bridge.waitExit()).toBe(0);
      expect(await t.api.runnerEvents(run.id)).toEqual([
        custom(1, "looked", { data: "beside the program", wrote: "no", other: "hidden" }),
      ]);
      expect(fs.existsSync(path.join(installed, "lib", "written"))).toBe(false);
    } finally {
      fs.rmSync(installed, { recursive: true, force: true });
      fs.rmSync(unrelated, { recursive: true, force: true });
    }
  });

  it("refuses with one clear line when bwrap is missing, cannot make namespaces, or socat is missing for allow:", async () => {
    /** A `run --sandbox os` with PATH set to just `dir`: its exit status and stderr; the run must stay queued. */
    const refused = async (dir: string, extra: string[] = []) => {
      const {
        run,
        dir: runDir,
        bridge,
      } = await sandboxedBridge({ extra, agent: [NODE, "-e", "0"], env: { PATH: dir } });
      const code = await bridge.waitExit();
      expect(fs.existsSync(runDir)).toBe(false);
      expect((await t.api.getRun(run.id)).status).toBe("queued");
      return { code, stderr: bridge.stderr() };
    };
    const tail = " (or run with --sandbox none)\n";
    expect(await refused(tempDir("no-bwrap-"))).toEqual({
      code: 1,
      stderr: `runner-bridge: --sandbox os: cannot set up the sandbox: bwrap is not on PATH; install bubblewrap (apt-get install bubblewrap)${tail}`,
    });
    // A kernel without unprivileged user namespaces: bwrap exits 1 with its own message (a script stands in for it).
    const noUserns = tempDir("bwrap-without-userns-");
    const message =
      "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.";
    fs.writeFileSync(path.join(noUserns, "bwrap"), `#!/bin/sh\necho "${message}" >&2\nexit 1\n`, { mode: 0o755 });
    expect(await refused(noUserns)).toEqual({
      code: 1,
      stderr: `runner-bridge: --sandbox os: cannot set up the sandbox: bwrap cannot create namespaces here: ${message}${tail}`,
    });
    const bwrapOnly = tempDir("bwrap-only-");
    fs.symlinkSync(onPath("bwrap") as string, path.join(bwrapOnly, "bwrap"));
    expect(await refused(bwrapOnly, ["--network", "allow:api.openai.com"])).toEqual({
      code: 1,
      stderr: `runner-bridge: --sandbox os: cannot set up the sandbox: --network allow: needs socat on PATH; install socat (apt-get install socat)${tail}`,
    });
  });
});
