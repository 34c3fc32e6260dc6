import { describe, expect, it } from "vitest";
import { useDevServer } from "../../support/dev-server.ts";
import { waitFor } from "../../support/wait.ts";

// Real sockets: a WebSocket client over TCP to a real `wrangler dev`. The close handshake of a
// socket the runtime holds for hibernation only shows on a real connection, not in the vitest pool.

const dev = useDevServer();

/** A viewer over a real WebSocket, recording frames and the close as they arrive. */
function watch(runId: string, token: string) {
  const frames: Array<{ type: string; [key: string]: unknown }> = [];
  let closed: { code: number } | null = null;
  const ws = new WebSocket(`${dev.url.replace("http", "ws")}/v1/runs/${runId}/watch?token=${token}`);
  ws.addEventListener("message", (event) => frames.push(JSON.parse(String(event.data))));
  ws.addEventListener("close", (event) => {
    closed = { code: event.code };
  });
  return { frames, closed: () => closed, ws };
}

describe("viewers over a real connection", () => {
  it("a viewer attaching to a finished run receives end, and the close follows it at once", async () => {
    const created = await dev.api.createRun();
    await dev.api.cancel(created.run.id);
    const viewer = watch(created.run.id, created.viewerToken);
    await waitFor("the end frame", () => viewer.frames.find((f) => f.type === "end"), 10_000, 5);
    // Well under a second; a socket held for hibernation closed only on eviction, ~10 s later.
    const closed = await waitFor("the close right after end", viewer.closed, 2_000, 5);
    expect(closed.code).toBe(1000);
    expect(viewer.frames.map((f) => f.type)).toEqual(["events", "status", "end"]);
  });
});
