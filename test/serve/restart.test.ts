import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { createRun, SENT, type Server, storedEvents } from "./scenarios.ts";
import { SERVE_API_KEY, SERVE_SECRETS, type ServeProcess, startServe } from "./serve-process.ts";
import { type Frame, openJsonSocket } from "./socket.ts";

// SIGUSR2 is the local deploy of `npm run bench -- --only storm`: serve kills workerd, so every
// socket drops at once, and starts it again on the same build and data.

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "serve-restart-"));
let server: ServeProcess | null = null;
const target = (): Server => ({ url: (server as ServeProcess).url, apiKey: SERVE_API_KEY });
const ws = (route: string) => target().url.replace(/^http/, "ws") + route;

beforeAll(async () => {
  server = await startServe({ dataDir, env: SERVE_SECRETS });
});
afterAll(async () => {
  await server?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The pids of `node serve/main.ts --port <port>` and of the workerd it runs, read from /proc. */
function servePids(port: string): { serve: number; workerd: number[] } {
  const procs = fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return { pid: Number(pid), ppid, args: fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0") };
      } catch {
        return null; // gone meanwhile
      }
    })
    .filter((p) => p !== null);
  const serve = procs.find((p) => p.args.some((a) => a.endsWith("serve/main.ts")) && p.args.includes(port));
  if (!serve) throw new Error(`no serve/main.ts --port ${port} running`);
  const workerd = procs.filter((p) => p.ppid === serve.pid && p.args[0]?.endsWith("/workerd")).map((p) => p.pid);
  return { serve: serve.pid, workerd };
}

const eventsOf = (frames: Frame[]) => frames.filter((f) => f.type === "events").flatMap((f) => f.events as unknown[]);

describe("npm run serve on SIGUSR2 (a local deploy)", () => {
  it("drops every socket at once, answers again on the same port and data, and a runner and a viewer resume where they were", async () => {
    const run = await createRun(target(), { agent: { name: "restart" } });
    const runner = await openJsonSocket(ws(`/v1/runs/${run.runId}/runner`), "runner", run.runnerToken);
    runner.send({ type: "hello", runnerId: "restart-runner", lastSourceSeq: 0 });
    expect(await runner.next("claimed")).toMatchObject({ epoch: 1, ackedSourceSeq: 0 });
    runner.send({ type: "events", epoch: 1, events: SENT.slice(0, 3) });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: 3 });
    const viewer = await openJsonSocket(ws(`/v1/runs/${run.runId}/watch?after=0&token=${run.viewerToken}`), "viewer");
    const before = eventsOf(await viewer.until("status"));
    expect(before).toEqual(await storedEvents(target(), run.runId));

    const port = new URL(target().url).port;
    const pids = servePids(port);
    expect(pids.workerd).toHaveLength(1);
    const output = (server as ServeProcess).output();
    process.kill(pids.serve, "SIGUSR2");
    await waitFor("both sockets to drop", () => runner.closed() !== null && viewer.closed() !== null, 10_000);
    // Dropped by the process going away, not closed by the server: no close frame reached either.
    expect([runner.closed()?.code, viewer.closed()?.code]).toEqual([1006, 1006]);
    await waitFor(
      'serve to log "restarted in … ms: serving …" again',
      () =>
        (server as ServeProcess)
          .output()
          .slice(output.length)
          .match(/\[serve\] restarted in \d+ ms: serving http/),
      30_000,
    );
    const after = servePids(port);
    expect(after.serve).toBe(pids.serve);
    expect(after.workerd).toHaveLength(1);
    expect(after.workerd).not.toEqual(pids.workerd);

    // The runner reconnects with its epoch and is claimed again with what was acked; the viewer
    // resumes from its last seq and gets the rest of the log exactly once.
    const lastSeq = (before.at(-1) as { seq: number }).seq;
    const again = await openJsonSocket(ws(`/v1/runs/${run.runId}/runner`), "runner again", run.runnerToken);
    again.send({ type: "hello", runnerId: "restart-runner", lastSourceSeq: 3, epoch: 1 });
    const claimed = await again.next("claimed");
    expect(claimed).toMatchObject({ ackedSourceSeq: 3 });
    const resumed = await openJsonSocket(
      ws(`/v1/runs/${run.runId}/watch?after=${lastSeq}&token=${run.viewerToken}`),
      "viewer again",
    );
    again.send({ type: "events", epoch: claimed.epoch, events: SENT.slice(3) });
    expect(await again.next("ack")).toEqual({ type: "ack", highestSourceSeq: 5 });
    again.send({ type: "complete", epoch: claimed.epoch, outcome: { status: "succeeded", exitCode: 0 } });
    expect(await again.next("completed")).toEqual({ type: "completed", status: "succeeded" });
    const rest = await resumed.until("end");
    const stored = await storedEvents(target(), run.runId);
    expect([...before, ...eventsOf(rest)]).toEqual(stored);
    expect(
      stored.filter((e) => e.source === "runner").map(({ sourceSeq, type, data }) => ({ sourceSeq, type, data })),
    ).toEqual(SENT);
    again.close();
    resumed.close();
  });

  it("stops on SIGTERM after a restart: the restarted workerd is gone too", async () => {
    const port = new URL(target().url).port;
    const { workerd } = servePids(port);
    const running = server as ServeProcess;
    await running.stop("SIGTERM");
    server = null;
    expect(running.output()).toContain("[serve] stopped");
    for (const pid of workerd) expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
  });
});
