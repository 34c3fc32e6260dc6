// The SDK's entry point: typed calls, the live watch and the transcript fold.
import { EdgeClient } from "./calls.ts";
import type { ClientOptions } from "./transport.ts";
import { type WatchOptions, type WatchUpdate, watchEvents, watchRun } from "./watch.ts";

export { ApiError } from "./errors.ts";
export { EdgeClient } from "./calls.ts";
export type { CallOptions, CheckpointUpload, EventsOptions, ListRunsOptions, UsageOptions } from "./calls.ts";
export type { ClientOptions } from "./transport.ts";
export type { WatchOptions, WatchUpdate } from "./watch.ts";
export { watchEvents, watchRun } from "./watch.ts";
export { socketOverFetch } from "./socket.ts";
export type { SocketOpener, ViewerSocket, WebSocketConstructor } from "./socket.ts";
export { OPERATIONS, NOT_CALLS } from "./operations.ts";
export type * from "../../src/protocol/index.ts";
export {
  AgentEventType,
  AguiEventFamily,
  AguiEventType,
  ControlEventType,
  isTerminal,
} from "../../src/protocol/index.ts";

/** The client with its watch as a method: `client.watch(runId)`. */
export class Client extends EdgeClient {
  /** Every update of the run (events, status, connection changes), ending with its record. */
  watch(runId: string, options?: WatchOptions): AsyncGenerator<WatchUpdate, void, undefined> {
    return watchRun(this, runId, options);
  }
  /** Just the events, exactly once; the generator's return value is the terminal record. */
  watchEvents(runId: string, options?: WatchOptions) {
    return watchEvents(this, runId, options);
  }
}

export function createClient(options: ClientOptions): Client {
  return new Client(options);
}
