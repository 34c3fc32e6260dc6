import { EXIT } from "../exit.ts";
import { createLogger } from "../logger.ts";
import { PoolUsageError, parsePoolArgs } from "./args.ts";
import { PoolHost } from "./host.ts";
import { loadProfiles, ProfilesError } from "./profiles.ts";

/** `runner-bridge pool ...`: runs until SIGINT/SIGTERM (0); exits 64 on bad flags, 1 on a bad agents file or a refused key. */
export async function poolMain(argv: string[], usage: string): Promise<number> {
  let args: ReturnType<typeof parsePoolArgs>;
  try {
    args = parsePoolArgs(argv);
  } catch (err) {
    if (!(err instanceof PoolUsageError)) throw err;
    process.stderr.write(`runner-bridge pool: ${err.message}\n${usage}\n`);
    return EXIT.usage;
  }
  const log = createLogger({ quiet: args.quiet, prefix: "runner-pool" });
  log.redact([args.key]);
  if (args.keyWarning) log.warn(args.keyWarning);
  let profiles: ReturnType<typeof loadProfiles>;
  try {
    profiles = loadProfiles(args.agentsFile);
  } catch (err) {
    if (!(err instanceof ProfilesError)) throw err;
    process.stderr.write(`runner-pool: ${err.message}\n`);
    return 1;
  }
  for (const line of profiles.skipped) log.info(line);
  log.info(
    `serving ${[...profiles.served.keys()].join(", ")} on queue ${args.queue} with ${args.slots} slots; runs in ${args.dir}`,
  );

  const host = new PoolHost(args, profiles.served, log);
  let stopping: Promise<void> | null = null;
  const stop = (signal: string) => {
    if (stopping) return;
    log.info(`${signal}: stopping every bridge and agent of this host`);
    stopping = host.stop();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  const refusal = await host.run();
  if (refusal) {
    process.stderr.write(`runner-pool: ${log.scrub(refusal)}\n`);
    await host.stop();
    return 1;
  }
  await stopping;
  return 0;
}
