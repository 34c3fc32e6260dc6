import { afterAll, beforeAll, describe, it } from "vitest";
import { type DevServer, startWranglerDev } from "../support/wrangler-dev.ts";
import { claimTimerFires, createClaimStreamWatch, type Server } from "./scenarios.ts";

// The same scenarios as serve.test.ts, against `wrangler dev`: both modes run the same code.
describe("the core scenarios under wrangler dev", () => {
  let dev: DevServer | null = null;
  const target = (): Server => ({ url: (dev as DevServer).url, apiKey: "dev-key-alpha" });

  beforeAll(async () => {
    dev = await startWranglerDev();
  });
  afterAll(async () => {
    await dev?.stop();
  });

  it("creates a run, claims it over the runner socket, streams events, and viewers see the exact log live and on replay", async () => {
    await createClaimStreamWatch(target());
  });

  it("fires a run's claim timer from its alarm", async () => {
    await claimTimerFires(target());
  });
});
