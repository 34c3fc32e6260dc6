import net from "node:net";

/** A loopback TCP proxy whose open connections can be frozen: kept open, carrying nothing, like a dead NAT. */
export interface FreezingProxy {
  url: string;
  /** Stops every connection open now, both ways, without closing it; later connections flow. */
  freezeAll(): number;
  close(): Promise<void>;
}

export async function startFreezingProxy(targetPort: number): Promise<FreezingProxy> {
  const open = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const frozen: net.Socket[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    const pair = { client, upstream };
    open.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(pair);
    };
    for (const socket of [client, upstream]) {
      socket.on("error", drop);
      socket.on("close", drop);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    freezeAll() {
      for (const { client, upstream } of open) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
        frozen.push(client, upstream);
      }
      const count = open.size;
      open.clear(); // frozen for good, until close()
      return count;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of frozen) socket.destroy();
        for (const { client, upstream } of open) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}
