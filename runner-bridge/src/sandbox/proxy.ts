import dns from "node:dns/promises";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import { domainAllowed } from "./policy.ts";

/** A host name's addresses (none when it does not resolve). */
export type Resolve = (host: string) => Promise<string[]>;

const systemResolve: Resolve = async (host) =>
  (await dns.lookup(host, { all: true }).catch(() => [])).map((found) => found.address);

/** An address and port the agent must not reach unless `host` (the name it is known by) is listed. */
export interface Guarded {
  host: string;
  port: number;
}

/**
 * The allow-list proxy of one sandbox (`--network allow:`), run by the supervisor outside the
 * sandbox on a unix socket that is the sandbox's only way out. HTTPS goes through CONNECT, plain
 * HTTP as absolute-URI requests; a host not on the list gets 403 and no connection is made. A
 * listed name is resolved here, once, and connected to by address. A name that resolves to a
 * loopback, private or link-local address (the host's own services, a metadata endpoint) is
 * refused unless that very name is listed as `localhost` or as the address itself, and the edge
 * (`guarded`, when it lives at such an address) is refused unless its own host is listed.
 */
export async function startAllowProxy(
  socketPath: string,
  domains: readonly string[],
  guarded?: Guarded,
  resolve: Resolve = systemResolve,
): Promise<http.Server> {
  const edge = guarded && !domainAllowed(domains, guarded.host) ? await localAddressesOf(guarded, resolve) : null;
  const decide = async (host: string, port: number): Promise<string[] | null> => {
    if (!domainAllowed(domains, host)) return null;
    const addresses = await resolve(host);
    if (addresses.length === 0) return null;
    if (addresses.some(isLocalAddress) && !namedLocally(domains, host)) return null;
    if (edge && port === edge.port && addresses.some((a) => edge.addresses.includes(a))) return null;
    return addresses;
  };
  const server = http.createServer((req, res) => void forward(req, res, decide));
  server.on("connect", async (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on("error", () => client.destroy());
    const target = splitHostPort(req.url ?? "");
    const addresses = target ? await decide(target.host, target.port) : null;
    if (!target || addresses === null) {
      client.end(refusal(target?.host ?? String(req.url)));
      return;
    }
    const upstream = await connectFirst(addresses, target.port);
    if (!upstream) {
      client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n");
      return;
    }
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
    upstream.on("error", () => client.destroy());
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

/** A connection to the first of the addresses that answers (a name may resolve to ::1 and 127.0.0.1). */
async function connectFirst(addresses: string[], port: number): Promise<net.Socket | null> {
  for (const address of addresses) {
    const socket = await new Promise<net.Socket | null>((resolve) => {
      const attempt = net.connect(port, address);
      attempt.once("connect", () => resolve(attempt));
      attempt.once("error", () => resolve(null));
    });
    if (socket) return socket;
  }
  return null;
}

/** The edge's addresses that are local: a public edge shares its addresses with unrelated sites behind the same CDN. */
async function localAddressesOf(guarded: Guarded, resolve: Resolve): Promise<{ addresses: string[]; port: number }> {
  return { addresses: (await resolve(guarded.host)).filter(isLocalAddress), port: guarded.port };
}

/** Only `localhost` or an address literal, listed as such, may lead to a local address. */
function namedLocally(domains: readonly string[], host: string): boolean {
  return (host === "localhost" || net.isIP(host) !== 0) && domains.includes(host);
}

/** Loopback, unspecified, private (RFC 1918, ULA), link-local or CGNAT: not the internet. */
export function isLocalAddress(address: string): boolean {
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  if (net.isIPv4(v4)) {
    const [a = 0, b = 0] = v4.split(".").map(Number);
    return (
      a === 127 ||
      a === 10 ||
      a === 0 ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168) ||
      (a === 169 && b === 254) ||
      (a === 100 && b >= 64 && b < 128)
    );
  }
  const v6 = address.toLowerCase();
  return v6 === "::1" || v6 === "::" || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6);
}

async function forward(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  decide: (host: string, port: number) => Promise<string[] | null>,
): Promise<void> {
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    res.writeHead(400).end("runner-bridge sandbox proxy: absolute http:// URLs only\n");
    return;
  }
  const port = Number(url.port || 80);
  const address = url.protocol === "http:" ? (await decide(url.hostname, port))?.[0] : undefined;
  if (address === undefined) {
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
