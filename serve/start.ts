/**
 * `npm start`: `wrangler dev` on port 8787 with its state in `.data/`, and beside it the embedded
 * default pool (serve/dev-pool.ts) unless `--no-pool` is given. Every other argument goes to
 * wrangler dev as it is.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { type DevPool, startDevPool } from "./dev-pool.ts";

const REPO = path.resolve(import.meta.dirname, "..");
const argv = process.argv.slice(2);
const withPool = !argv.includes("--no-pool");
const passed = argv.filter((arg) => arg !== "--no-pool");
const say = (line: string) => process.stderr.write(`[start] ${line}\n`);

const flag = (name: string) => {
  const at = passed.indexOf(name);
  return at >= 0 ? passed[at + 1] : undefined;
};
const port = flag("--port") ?? "8787";
const persist = flag("--persist-to") ?? ".data";
const defaults = [
  ...(flag("--port") ? [] : ["--port", port]),
  ...(flag("--persist-to") ? [] : ["--persist-to", persist]),
];
const wrangler = spawn(
  process.execPath,
  [path.join(REPO, "node_modules/wrangler/bin/wrangler.js"), "dev", ...defaults, ...passed],
  {
    cwd: REPO,
    stdio: "inherit",
  },
);
const wranglerExited = new Promise<number>((resolve) => wrangler.once("exit", (code) => resolve(code ?? 1)));

let pool: DevPool | null = null;
if (withPool) {
  const host = flag("--ip") ?? "127.0.0.1";
  startDevPool({
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`,
    dataDir: path.resolve(REPO, persist),
    say,
  })
    .then((started) => {
      pool = started;
    })
    .catch((err: Error) => say(`embedded pool not started: ${err.message}`));
}
// Ctrl-C reaches wrangler and the pool (one process group); this process only waits for them.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => wrangler.kill("SIGTERM"));
const code = await wranglerExited;
await (pool as DevPool | null)?.stop();
process.exit(code);
