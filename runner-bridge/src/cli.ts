import { randomUUID } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { RUN_ID_PATTERN } from "../../src/protocol/index.ts";
import { ADAPTERS, createAdapter } from "./adapters/index.ts";
import { agentEnvironment } from "./agent-env.ts";
import { type AttachArgs, type CommonArgs, parseArgs, type ResumeArgs, type RunArgs, USAGE, VERSION } from "./args.ts";
import { getRecovery } from "./checkpoint/edge-api.ts";
import { sessionPlaces } from "./checkpoint/files.ts";
import { normalizeEdge, type Preflight, preflight } from "./edge.ts";
import { BridgeExit, EXIT, type ExitCode } from "./exit.ts";
import { startAgent } from "./launch.ts";
import { createLogger, type Logger } from "./logger.ts";
import { pollUntil } from "./poll.ts";
import { terminateGroup } from "./proctree.ts";
import {
  defaultRunDir,
  journalExists,
  newNonce,
  type RunPaths,
  type RunSpec,
  readPid,
  readSpec,
  removeRunFiles,
  runPaths,
} from "./rundir.ts";
import { poolMain } from "./pool/command.ts";
import { prepareResume } from "./resume.ts";
import { requireSandboxTools } from "./sandbox/check.ts";
import { agentHome, agentWorkspace, planSandbox, programPath } from "./sandbox/plan.ts";
import { formatNetwork } from "./sandbox/policy.ts";
import { Session } from "./session.ts";

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === "pool") return poolMain(argv.slice(1), USAGE);
  const parsed = parseArgs(argv);
  if (!parsed.ok) {
    process.stderr.write(`runner-bridge: ${parsed.message}\n${USAGE}\n`);
    return EXIT.usage;
  }
  const args = parsed.value;
  if (args.command === "help" || args.command === "version") {
    process.stdout.write(`${args.command === "help" ? USAGE : `runner-bridge ${VERSION}`}\n`);
    return EXIT.ok;
  }
  const log = createLogger({ quiet: args.quiet });
  log.redact([args.token]);
  try {
    if (!RUN_ID_PATTERN.test(args.runId)) throw new BridgeExit(EXIT.usage, `--run ${args.runId} is not a valid run id`);
    normalizeEdge(args.edge);
    if (args.command === "run") return await runCommand(args, log);
    if (args.command === "resume") return await resumeCommand(args, log);
    return await attachCommand(args, log);
  } catch (err) {
    if (err instanceof BridgeExit) {
      process.stderr.write(`runner-bridge: ${log.scrub(err.message)}\n`);
      return err.code;
    }
    process.stderr.write(`runner-bridge: ${log.scrub((err as Error).message ?? String(err))}\n`);
    return EXIT.failure;
  }
}

/** One look at the edge, retried briefly only while it cannot be reached at all. */
async function lookAtRun(args: CommonArgs): Promise<Preflight> {
  let look: Preflight = { kind: "unreachable", message: "not tried" };
  await pollUntil(
    async () => {
      look = await preflight(args.edge, args.runId, args.token, 5000);
      return look.kind !== "unreachable";
    },
    10_000,
    250,
  );
  return look;
}

function failOnVerdict(look: Preflight, runId: string): void {
  if (look.kind === "unknown")
    throw new BridgeExit(EXIT.unknownRun, `unknown-run: the edge does not know run ${runId}`);
  if (look.kind === "terminal")
    throw new BridgeExit(EXIT.terminalRun, `terminal-run: run ${runId} is already ${look.status}`);
  if (look.kind === "denied") throw new BridgeExit(EXIT.failure, look.message);
  if (look.kind === "unreachable") throw new BridgeExit(EXIT.failure, `edge unreachable: ${look.message}`);
}

function sessionFor(args: CommonArgs, paths: RunPaths, spec: RunSpec, log: Logger, resume = false): Session {
  for (const name of spec.envNames) {
    const value = process.env[name];
    if (value) log.redact([value]);
  }
  const fault = process.env.RUNNER_BRIDGE_FAULT;
  // A sandboxed agent's HOME is the one its spec names, whatever this bridge's HOME is.
  const agentEnv = { ...agentEnvironment(spec.envNames, false), ...(spec.sandbox ? { HOME: spec.sandbox.home } : {}) };
  const places = sessionPlaces(spec.adapter, agentEnv, spec.cwd, spec.checkpoint);
  return new Session({
    edge: args.edge,
    runId: args.runId,
    token: args.token,
    paths,
    spec,
    makeAdapter: () => createAdapter(spec.adapter, spec),
    log,
    // One id for this process across all its reconnects; the suffix keeps two processes with the
    // same host name and pid (containers) apart.
    runnerId: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    giveUpMs: args.giveUpMs,
    reconnectMinMs: args.reconnectMinMs,
    reconnectMaxMs: Math.max(args.reconnectMinMs, args.reconnectMaxMs),
    graceMs: args.graceMs,
    lingerMs: args.lingerMs,
    claimTimeoutMs: 15_000,
    checkpoint: { places, intervalMs: args.checkpointIntervalMs },
    ...(spec.generation !== undefined ? { generation: spec.generation } : {}),
    ...(resume ? { resume } : {}),
    ...(fault ? { fault } : {}),
  });
}

async function runCommand(args: RunArgs, log: Logger): Promise<ExitCode> {
  if (!(ADAPTERS as readonly string[]).includes(args.adapter)) {
    throw new BridgeExit(EXIT.failure, `unknown adapter ${args.adapter} (one of ${ADAPTERS.join(", ")})`);
  }
  const agentEnv = agentEnvironment(args.envNames);
  for (const name of args.envNames) log.redact([agentEnv[name] as string]);
  const paths = freshRunDir(args);
  // Refuse before anything of the run exists when no sandbox can be made here.
  if (args.sandbox.mode === "os") requireSandboxTools(args.sandbox.network);
  const look = await lookAtRun(args);
  failOnVerdict(look, args.runId);
  if (look.kind === "live" && look.status === "recovering") {
    // Only a restart may be claimed by a plain run; anything else would race a resume.
    const state = await getRecovery(args);
    if (state.mode !== "restart") {
      const hint = state.mode === "resume" ? "use runner-bridge resume" : "an operator must decide first";
      throw new BridgeExit(
        EXIT.notResumable,
        `recovering: run ${args.runId} is recovering in mode ${state.mode ?? "unknown"}; ${hint}`,
      );
    }
  }

  const [program, ...commandArgs] = args.argv as [string, ...string[]];
  const command = programPath(program);
  const cwd = agentWorkspace(args.sandbox, args.runId);
  useSandboxHome(args, paths, agentEnv);
  const spec: RunSpec = {
    version: 1,
    runId: args.runId,
    adapter: args.adapter,
    command,
    args: commandArgs,
    cwd,
    envNames: args.envNames,
    nonce: newNonce(),
    createdAt: new Date().toISOString(),
  };
  if (args.prompt !== undefined) spec.prompt = args.prompt;
  if (args.checkpoint !== undefined) spec.checkpoint = path.resolve(cwd, args.checkpoint);
  const sandbox = planSandbox(args.sandbox, {
    ...spec,
    runDir: paths.dir,
    agentEnv,
    edge: args.edge,
    ...secrets(args),
  });
  if (sandbox) spec.sandbox = sandbox;
  await startAgent(paths, spec, createAdapter(spec.adapter, spec), { ...agentEnv, AGENT_RUN_ID: args.runId }, [
    args.token,
  ]);
  log.info(`launched ${command} for run ${args.runId}${sandboxNote(spec)}; journal ${paths.journal}`);
  return sessionFor(args, paths, spec, log).run();
}

/** A new generation on a fresh sandbox: restore the checkpoint, resume the provider's session. */
async function resumeCommand(args: ResumeArgs, log: Logger): Promise<ExitCode> {
  const agentEnv = agentEnvironment(args.envNames);
  for (const name of args.envNames) log.redact([agentEnv[name] as string]);
  const paths = freshRunDir(args);
  if (args.sandbox.mode === "os") requireSandboxTools(args.sandbox.network);
  failOnVerdict(await lookAtRun(args), args.runId);
  // Before the restore, so the checkpoint's session files land in the HOME the agent will have.
  useSandboxHome(args, paths, agentEnv);
  const { spec, env } = await prepareResume(args, agentEnv, log, agentWorkspace(args.sandbox, args.runId));
  const sandbox = planSandbox(args.sandbox, {
    ...spec,
    runDir: paths.dir,
    agentEnv: env,
    edge: args.edge,
    ...secrets(args),
  });
  if (sandbox) spec.sandbox = sandbox;
  await startAgent(paths, spec, createAdapter(spec.adapter, spec), { ...env, AGENT_RUN_ID: args.runId }, [args.token]);
  log.info(
    `resumed run ${args.runId} as generation ${spec.generation} with ${spec.command}${sandboxNote(spec)}; journal ${paths.journal}`,
  );
  return sessionFor(args, paths, spec, log, true).run();
}

/** A sandboxed agent's HOME is its own (--home, else `<run dir>.home`), never the bridge's. */
function useSandboxHome(args: RunArgs | ResumeArgs, paths: RunPaths, agentEnv: Record<string, string>): void {
  const home = agentHome(args.sandbox, paths.dir);
  if (home !== undefined) agentEnv.HOME = home;
}

/** The bridge's own files a sandboxed agent must not read: the token file it was given. */
function secrets(args: CommonArgs): { secretFiles: string[] } {
  return { secretFiles: args.tokenFile !== undefined ? [args.tokenFile] : [] };
}

function sandboxNote(spec: RunSpec): string {
  return spec.sandbox ? ` in a sandbox (network ${formatNetwork(spec.sandbox.network)}, workspace ${spec.cwd})` : "";
}

function freshRunDir(args: CommonArgs): RunPaths {
  const paths = runPaths(args.dir ?? defaultRunDir(args.runId));
  if (journalExists(paths)) {
    throw new BridgeExit(EXIT.failure, `a journal already exists in ${paths.dir}; use attach to take it over`);
  }
  return paths;
}

async function attachCommand(args: AttachArgs, log: Logger): Promise<ExitCode> {
  const paths = runPaths(args.dir ?? defaultRunDir(args.runId));
  const hadJournal = journalExists(paths);
  const look = await lookAtRun(args);
  if (look.kind === "terminal") {
    // Nothing may keep running for a finished run; its journal has no reader any more.
    if (hadJournal) await cleanUpFinished(paths, args.graceMs);
    throw new BridgeExit(EXIT.terminalRun, `terminal-run: run ${args.runId} is already ${look.status}`);
  }
  failOnVerdict(look, args.runId);
  if (!hadJournal && !(await pollUntil(() => journalExists(paths), args.waitMs, 50))) {
    throw new BridgeExit(
      EXIT.journalTimeout,
      `journal-timeout: no journal appeared in ${paths.dir} within --wait-ms ${args.waitMs} ms`,
    );
  }
  const spec = readSpec(paths);
  if (!spec) throw new BridgeExit(EXIT.failure, `no run spec in ${paths.dir}`);
  if (spec.runId !== args.runId) {
    throw new BridgeExit(EXIT.failure, `the journal in ${paths.dir} belongs to run ${spec.runId}, not ${args.runId}`);
  }
  log.info(`attaching to run ${args.runId} (journal ${paths.journal})`);
  return sessionFor(args, paths, spec, log).run();
}

async function cleanUpFinished(paths: RunPaths, graceMs: number): Promise<void> {
  const pgid = readPid(paths.agentPid);
  if (pgid !== null) await terminateGroup(pgid, graceMs);
  removeRunFiles(paths);
}
