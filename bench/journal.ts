/**
 * How fast an agent's stdout reaches the journal: through the supervisor (line by line, secrets
 * redacted, a time per line) against the kernel appending it to the file directly (what the
 * supervisor did before it journaled lines itself), measured in the same run.
 *
 *   node bench/journal.ts [--lines N] [--bytes B] [--rounds R]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { ndjsonAdapter } from "../runner-bridge/src/adapters/ndjson.ts";
import { startAgent } from "../runner-bridge/src/launch.ts";
import { type RunSpec, runPaths } from "../runner-bridge/src/rundir.ts";
import { median } from "./stats.ts";

const { values } = parseArgs({
  options: { lines: { type: "string" }, bytes: { type: "string" }, rounds: { type: "string" } },
});
const LINES = Number(values.lines ?? 200_000);
const BYTES = Number(values.bytes ?? 200);
const ROUNDS = Number(values.rounds ?? 3);
const SECRET = "sk-bench-0123456789abcdef";

// The agent: LINES lines of BYTES bytes each, written in 64 KiB chunks, every 100th with the secret.
const AGENT = `
const line = (i) => (i % 100 === 0 ? '{"type":"tick","env":"${SECRET}","i":' : '{"type":"tick","i":') + i + ',"pad":"';
let out = "";
for (let i = 0; i < ${LINES}; i++) {
  const head = line(i);
  out += head + "x".repeat(Math.max(0, ${BYTES} - head.length - 3)) + '"}\\n';
  if (out.length >= 65536) { require("fs").writeSync(1, out); out = ""; }
}
require("fs").writeSync(1, out);
`;

async function viaSupervisor(): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-journal-"));
  const paths = runPaths(dir);
  const spec: RunSpec = {
    version: 1,
    runId: "bench",
    adapter: "ndjson",
    command: process.execPath,
    args: ["-e", AGENT],
    cwd: dir,
    envNames: ["BENCH_SECRET"],
    nonce: `nonce-${Date.now()}`,
    createdAt: new Date().toISOString(),
  };
  const started = performance.now();
  await startAgent(paths, spec, ndjsonAdapter(), { PATH: process.env.PATH ?? "", BENCH_SECRET: SECRET }, ["rt1.tok"]);
  while (!tail(paths.journal).includes("__runnerBridgeExit")) await new Promise((r) => setTimeout(r, 5));
  const ms = performance.now() - started;
  if (fs.readFileSync(paths.journal, "utf8").includes(SECRET)) throw new Error("the secret reached the journal");
  fs.rmSync(dir, { recursive: true, force: true });
  return ms;
}

/** The journal's last 200 bytes. */
function tail(file: string): string {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(200, size));
    fs.readSync(fd, buf, 0, buf.length, size - buf.length);
    return buf.toString("latin1");
  } finally {
    fs.closeSync(fd);
  }
}

async function kernelAppend(): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-journal-"));
  const journal = path.join(dir, "journal.ndjson");
  const started = performance.now();
  const fd = fs.openSync(journal, "a", 0o600);
  const child = spawn(process.execPath, ["-e", AGENT], { stdio: ["ignore", fd, "ignore"] });
  await new Promise((r) => child.on("exit", r));
  fs.closeSync(fd);
  const ms = performance.now() - started;
  fs.rmSync(dir, { recursive: true, force: true });
  return ms;
}

const supervised: number[] = [];
const direct: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  direct.push(await kernelAppend());
  supervised.push(await viaSupervisor());
}
const mb = (LINES * BYTES) / 1024 / 1024;
const row = (name: string, samples: number[]) => {
  const ms = median(samples);
  return `| ${name} | ${ms.toFixed(0)} | ${(mb / (ms / 1000)).toFixed(1)} | ${(ms / median(direct)).toFixed(2)}× |`;
};
console.log(
  `journal: ${LINES} lines of ${BYTES} B (${mb.toFixed(1)} MiB), median of ${ROUNDS} rounds, node ${process.version}`,
);
console.log("| path | ms | MiB/s | vs kernel append |\n| --- | --- | --- | --- |");
console.log(row("kernel appends stdout to the file (peer)", direct));
console.log(row("supervisor: lines, redaction, times", supervised));
