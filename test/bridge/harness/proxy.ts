import net from "node:net";

/** A loopback TCP proxy that can cut every connection through it on demand. */
export interface CutProxy {
  port: number;
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Destroys every open connection (both sides), as a network failure would. */
  cutAll(): number;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<CutProxy> {
  const open = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(targetPort, "127.0.0.1");
    open.add(client);
    open.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    cutAll() {
      const n = open.size;
      for (const s of open) s.destroy();
      open.clear();
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
