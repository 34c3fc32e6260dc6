/**
 * A workerd config for a bench-only worker: one module, one SQLite Durable Object class bound as
 * `binding`, its storage in `dir/do`, listening on loopback `port` (the floor worker, the list bench).
 */
import fs from "node:fs";
import path from "node:path";

export function writeOneObjectConfig(o: {
  dir: string;
  module: string;
  binding: string;
  className: string;
  port: number;
  compatibilityDate: string;
}): string {
  fs.mkdirSync(path.join(o.dir, "do"), { recursive: true });
  const file = path.join(o.dir, "config.capnp");
  fs.writeFileSync(
    file,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = (
      modules = [(name = "${o.module}", esModule = embed "${o.module}")],
      compatibilityDate = "${o.compatibilityDate}",
      bindings = [(name = "${o.binding}", durableObjectNamespace = "${o.className}")],
      durableObjectNamespaces = [(className = "${o.className}", uniqueKey = "bench-${o.className}", enableSql = true)],
      durableObjectStorage = (localDisk = "do"),
    )),
    (name = "do", disk = (path = "${path.join(o.dir, "do")}", writable = true)),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${o.port}", http = (), service = "main")],
);
`,
  );
  return file;
}
