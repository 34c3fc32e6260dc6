/** Exit statuses of the CLI (documented in docs/RUNNER-BRIDGE.md). */
export const EXIT = {
  ok: 0,
  failure: 1,
  fenced: 2,
  unknownRun: 3,
  terminalRun: 4,
  journalTimeout: 5,
  /** resume: the run is not recovering in mode resume (or a claim was refused for recovery). */
  notResumable: 6,
  /** Bad flags or arguments (like agent-run). */
  usage: 64,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Thrown to end the bridge with a given status and one-line reason. */
export class BridgeExit extends Error {
  readonly code: ExitCode;
  constructor(code: ExitCode, reason: string) {
    super(reason);
    this.name = "BridgeExit";
    this.code = code;
  }
}
