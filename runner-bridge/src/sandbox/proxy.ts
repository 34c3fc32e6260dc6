import dns from "node:dns/promises";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import { domainAllowed } from "./policy.ts";

/** An address and port the agent must not reach unless `host` (the name it is known by) is listed. */
export interface Guarded {
  host: string;
  port: number;
}

/**
 * The allow-list proxy of one sandbox (`--network allow:`), run by the supervisor outside the
 * sandbox on a unix socket that is the sandbox's only way out. HTTPS goes through CONNECT, plain
 * HTTP as absolute-URI requests; a host not on the list gets 403 and no connection is made. A
 * listed name is resolved here, once, and connected to by address; one that resolves to the edge
 * (`guarded`) is refused unless the edge's own host is listed too.
 */
export async function startAllowProxy(
  socketPath: string,
  domains: readonly string[],
  guarded?: Guarded,
): Promise<http.Server> {
  const edge = guarded && !domainAllowed(domains, guarded.host) ? await addressesOf(guarded) : null;
  const decide = async (host: string, port: number): Promise<string | null> => {
    if (!domainAllowed(domains, host)) return null;
    const addresses = (await dns.lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
    const address = addresses[0];
    if (address === undefined) return null;
    if (edge && port === edge.port && addresses.some((a) => edge.addresses.includes(a))) return null;
    return address;
  };
  const server = http.createServer((req, res) => void forward(req, res, decide));
  server.on("connect", async (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on("error", () => client.destroy());
    const target = splitHostPort(req.url ?? "");
    const address = target ? await decide(target.host, target.port) : null;
    if (!target || address === null) {
      client.end(refusal(target?.host ?? String(req.url)));
      return;
    }
    const upstream = net.connect(target.port, address, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n"));
    client.on("close", () => upstream.destroy());
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  fs.rmSync(socketPath, { force: true });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      fs.chmodSync(socketPath, 0o600);
      resolve(server);
    });
  });
}

async function addressesOf(guarded: Guarded): Promise<{ addresses: string[]; port: number }> {
  const found = await dns.lookup(guarded.host, { all: true }).catch(() => []);
  return { addresses: [guarded.host, ...found.map((a) => a.address)], port: guarded.port };
}

async function forward(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  decide: (host: string, port: number) => Promise<string | null>,
): Promise<void> {
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    res.writeHead(400).end("runner-bridge sandbox proxy: absolute http:// URLs only\n");
    return;
  }
  const port = Number(url.port || 80);
  const address = url.protocol === "http:" ? await decide(url.hostname, port) : null;
  if (address === null) {
    res.writeHead(403, { "content-type": "text/plain" }).end(refusalText(url.hostname));
    return;
  }
  const upstream = http.request(
    { host: address, port, path: `${url.pathname}${url.search}`, method: req.method, headers: req.headers },
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
