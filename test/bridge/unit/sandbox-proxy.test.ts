import fs from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLocalAddress, type Resolve, startAllowProxy } from "../../../runner-bridge/src/sandbox/proxy.ts";

// The allow-list proxy over its real unix socket, to a real server on loopback. Names resolve
// through a table, so a name can be made to point at the host itself without touching DNS.
const NAMES: Record<string, string[]> = {
  localhost: ["::1", "127.0.0.1"], // the server listens on 127.0.0.1 only: the proxy tries both
  "rebound.example.com": ["127.0.0.1"],
  "127.0.0.1": ["127.0.0.1"],
};
const resolve: Resolve = async (host) => NAMES[host] ?? [];

let server: http.Server;
let port: number;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "allow-proxy-"));
beforeAll(async () => {
  server = http.createServer((_req, res) => res.end("reached"));
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** CONNECT host:port through the proxy, then GET /: the status line of the CONNECT and the body. */
function tunnel(socketPath: string, authority: string): Promise<{ status: string; body: string }> {
  return new Promise((done, fail) => {
    const socket = net.connect(socketPath);
    let text = "";
    let status = "";
    socket.on("connect", () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      if (!status && text.includes("\r\n\r\n")) {
        status = text.slice(0, text.indexOf("\r\n"));
        text = "";
        if (status.includes(" 200 ")) socket.write(`GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      }
    });
    socket.on("end", () => done({ status, body: text.includes("\r\n\r\n") ? (text.split("\r\n\r\n")[1] ?? "") : "" }));
    socket.on("error", fail);
    socket.setTimeout(5000, () => fail(new Error(`no answer to CONNECT ${authority}`)));
  });
}

async function proxy(name: string, domains: string[], guarded?: { host: string; port: number }) {
  const socket = path.join(scratch, `${name}.sock`);
  const listening = await startAllowProxy(socket, domains, guarded, resolve);
  return { socket, close: () => listening.close() };
}

describe("the sandbox's allow-list proxy", () => {
  it("tunnels to a listed name (trying each of its addresses) and refuses an unlisted one with 403", async () => {
    const p = await proxy("listed", ["localhost"]);
    expect(await tunnel(p.socket, `localhost:${port}`)).toEqual({
      status: "HTTP/1.1 200 Connection Established",
      body: "reached",
    });
    expect((await tunnel(p.socket, `127.0.0.1:${port}`)).status).toBe("HTTP/1.1 403 Forbidden");
    expect((await tunnel(p.socket, `unknown.example.com:${port}`)).status).toBe("HTTP/1.1 403 Forbidden");
    p.close();
  });

  it("refuses a listed name that resolves to the host itself unless it is localhost or the address", async () => {
    const p = await proxy("rebound", ["*.example.com", "127.0.0.1"]);
    expect((await tunnel(p.socket, `rebound.example.com:${port}`)).status).toBe("HTTP/1.1 403 Forbidden");
    expect((await tunnel(p.socket, `127.0.0.1:${port}`)).body).toBe("reached");
    p.close();
  });

  it("refuses the edge's own address and port by any listed name, unless the edge's host is listed", async () => {
    const guarded = await proxy("guarded", ["localhost"], { host: "127.0.0.1", port });
    expect((await tunnel(guarded.socket, `localhost:${port}`)).status).toBe("HTTP/1.1 403 Forbidden");
    guarded.close();
    const listed = await proxy("edge-listed", ["localhost", "127.0.0.1"], { host: "127.0.0.1", port });
    expect((await tunnel(listed.socket, `localhost:${port}`)).body).toBe("reached");
    listed.close();
  });
});

describe("local addresses", () => {
  it("are loopback, private, link-local, CGNAT and unspecified ones, v4 and v6", () => {
    for (const a of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
    ])
      expect(isLocalAddress(a), a).toBe(true);
    for (const a of ["8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1", "::ffff:1.1.1.1"])
      expect(isLocalAddress(a), a).toBe(false);
  });
});
