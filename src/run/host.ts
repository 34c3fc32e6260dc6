import type { Result } from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";
import type { RunLimits } from "./run-limits.ts";
import type { RunSockets } from "./sockets/run-sockets.ts";
import type { PresentedToken } from "./token-store.ts";

/** What socket frame handlers need from the object that owns the run. */
export interface RunHost {
  readonly sockets: RunSockets;
  readonly limits: RunLimits;
  /**
   * Runs `step` in one storage transaction, then delivers its effects. A step that returns a
   * Failure is rolled back whole, so a refused request never leaves a partial write.
   */
  operate<T>(step: (machine: RunMachine) => Result<T>): Promise<Result<T>>;
  /** A read outside any transaction: `not_found` for no run, `gone` for a purged one. */
  read<T>(step: (machine: RunMachine) => T): Result<T>;
  /** Whether a token may still act on the run: `token_revoked`, or `unauthorized` once expired. */
  checkToken(token: PresentedToken): Result<null>;
}
