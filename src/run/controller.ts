import type { CommandBody, Failure } from "../protocol/index.ts";
import type { CommandRecord } from "../protocol/index.ts";
import type { RunMachine } from "./run-machine.ts";

/** A command from an operator, over HTTP or a viewer socket; cancel takes its own path. */
export function controllerCommand(
  machine: RunMachine,
  body: CommandBody,
): { created: boolean; command: CommandRecord | null } | Failure {
  if (body.type === "cancel") return machine.cancel(body.commandId, undefined);
  return machine.submitCommand(body.commandId, body.type, body.text === undefined ? {} : { text: body.text });
}
