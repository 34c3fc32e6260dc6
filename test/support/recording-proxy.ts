import http from "node:http";
import net from "node:net";

/** One request as it crossed the wire: what a proxy or an access log in between would keep. */
export interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
  upgrade: boolean;
}

export interface RecordingProxy {
  url: string;
  seen(): SeenRequest[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy before the edge that records every request line and Authorization header
 * (plain requests and WebSocket upgrades alike), then passes the bytes through unchanged.
 */
export async function startRecordingProxy(targetPort: number): Promise<RecordingProxy> {
  const seen: SeenRequest[] = [];
  const sockets = new Set<net.Socket>();
  const record = (req: http.IncomingMessage, upgrade: boolean) =>
    seen.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, upgrade });

  const server = http.createServer((req, res) => {
    record(req, false);
    const upstream = http.request(
      { host: "127.0.0.1", port: targetPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  server.on("upgrade", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    record(req, true);
    const upstream = net.connect(targetPort, "127.0.0.1", () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length) upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
      s.on("close", () => sockets.delete(s));
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen: () => [...seen],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
