import type { CommandBody, CommandRecord, Result } from "../protocol/index.ts";
import type { RunMachine, Submitted } from "./run-machine.ts";

/** What an operator's command needs. */
export type ControllerHost = Pick<RunMachine, "cancel" | "submitCommand">;

/** A command from an operator, over HTTP or a viewer socket; cancel takes its own path. */
export function controllerCommand(machine: ControllerHost, body: CommandBody): Result<Submitted<CommandRecord | null>> {
  if (body.type === "cancel") return machine.cancel(body.commandId, undefined, body.generation);
  const fields = body.text === undefined ? {} : { text: body.text };
  return machine.submitCommand(body.commandId, body.type, fields, body.generation);
}
