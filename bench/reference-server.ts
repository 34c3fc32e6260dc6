/**
 * The reference Durable Streams server (`@durable-streams/server`) as a child process of the
 * benchmark, so it does not share an event loop with the client.
 *
 *   node bench/reference-server.ts            in-memory store
 *   node bench/reference-server.ts <dataDir>  file-backed store (segment files + fdatasync + LMDB)
 *
 * Listens on a free loopback port and prints `READY <url>` on stdout; stops on SIGTERM/SIGINT.
 */
import { DurableStreamTestServer } from "@durable-streams/server";

const dataDir = process.argv[2];
const server = new DurableStreamTestServer({
  port: 0,
  host: "127.0.0.1",
  ...(dataDir ? { dataDir } : {}),
});
const url = await server.start();
process.stdout.write(`READY ${url}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  const force = setTimeout(() => process.exit(1), 5_000);
  try {
    await server.stop();
  } finally {
    clearTimeout(force);
    process.exit(0);
  }
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// The parent died without signalling us: do not outlive it.
process.stdin.on("end", stop);
process.stdin.resume();
