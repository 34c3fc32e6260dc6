import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import { domainAllowed } from "./policy.ts";

/**
 * The allow-list proxy of one sandbox (`--network allow:`), run by the supervisor outside the
 * sandbox on a unix socket that is the sandbox's only way out. HTTPS goes through CONNECT, plain
 * HTTP as absolute-URI requests; a host not on the list gets 403 and no connection is made.
 * It filters by the name the agent asks for, so an allowed name is reached wherever it resolves.
 */
export function startAllowProxy(socketPath: string, domains: readonly string[]): Promise<http.Server> {
  fs.rmSync(socketPath, { force: true });
  const server = http.createServer((req, res) => forward(req, res, domains));
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = splitHostPort(req.url ?? "");
    if (!target || !domainAllowed(domains, target.host)) {
      client.end(refusal(target?.host ?? String(req.url)));
      return;
    }
    const upstream = net.connect(target.port, target.host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n"));
    client.on("error", () => upstream.destroy());
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      fs.chmodSync(socketPath, 0o600);
      resolve(server);
    });
  });
}

function forward(req: http.IncomingMessage, res: http.ServerResponse, domains: readonly string[]): void {
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    res.writeHead(400).end("runner-bridge sandbox proxy: absolute http:// URLs only\n");
    return;
  }
  if (url.protocol !== "http:" || !domainAllowed(domains, url.hostname)) {
    res.writeHead(403, { "content-type": "text/plain" }).end(refusalText(url.hostname));
    return;
  }
  const upstream = http.request(
    {
      host: url.hostname,
      port: url.port || 80,
      path: `${url.pathname}${url.search}`,
      method: req.method,
      headers: req.headers,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", () => res.writeHead(502).end());
  req.pipe(upstream);
}

function splitHostPort(authority: string): { host: string; port: number } | null {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(authority);
  if (!m) return null;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: (m[1] as string).toLowerCase(), port } : null;
}

function refusalText(host: string): string {
  return `runner-bridge sandbox: ${host} is not on this run's network allow-list\n`;
}

function refusal(host: string): string {
  const body = refusalText(host);
  return `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
