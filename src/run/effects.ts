import type { RunEvent, ServerToRunner } from "../protocol/index.ts";

/** What an operation on the run asks the object to do after its transaction commits. */
export interface Effects {
  /** Events appended, in seq order, for live viewers. */
  appended: RunEvent[];
  statusChanged: boolean;
  /** Usage totals changed: the tenant index is brought up to date as after a status change. */
  usageChanged: boolean;
  /** Frames for the current runner socket. */
  runnerFrames: ServerToRunner[];
  /** Set when the object itself ended the run: send it to the runner, then close its socket. */
  endRunner: ServerToRunner | null;
}

export function noEffects(): Effects {
  return { appended: [], statusChanged: false, usageChanged: false, runnerFrames: [], endRunner: null };
}
