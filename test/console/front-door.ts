import net from "node:net";

/**
 * A loopback front door before `wrangler dev`, standing in for the edge in front of a deployed
 * worker: a restart behind it drops open connections, but a new connection is held (not refused)
 * until the server answers again. So the page sees its socket drop and must reconnect by itself,
 * and the browser never logs a refused connection while the server is down.
 */
export interface FrontDoor {
  url: string;
  close(): Promise<void>;
}

export async function startFrontDoor(targetPort: () => number, holdMs = 90_000): Promise<FrontDoor> {
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    open.add(client);
    client.pause();
    const deadline = Date.now() + holdMs;
    const dial = () => {
      const upstream = net.connect(targetPort(), "127.0.0.1");
      const refused = () => {
        upstream.destroy();
        if (client.destroyed || Date.now() > deadline) client.destroy();
        else setTimeout(dial, 100);
      };
      upstream.once("error", refused);
      upstream.once("connect", () => {
        upstream.off("error", refused);
        open.add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          open.delete(client);
          open.delete(upstream);
        };
        for (const socket of [client, upstream]) {
          socket.on("error", drop);
          socket.on("close", drop);
        }
        client.pipe(upstream);
        upstream.pipe(client);
      });
    };
    client.on("error", () => client.destroy());
    dial();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
