import type { Failure } from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";
import type { RunSockets } from "./sockets.ts";

/** What frame handlers need from the object that owns the run. */
export interface RunHost {
  readonly sockets: RunSockets;
  /**
   * Runs `step` in one storage transaction, then delivers its effects. A step that returns a
   * Failure is rolled back whole, so a refused request never leaves a partial write.
   */
  operate<T>(step: (machine: RunMachine) => T | Failure): Promise<T | Failure>;
}
