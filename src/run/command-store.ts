import type { CommandFrame, CommandRecord, CommandState, CommandType } from "../protocol/index.ts";

interface RawCommand extends Record<string, SqlStorageValue> {
  command_id: string;
  controller_seq: number;
  kind: string;
  body: string;
  fingerprint: string;
  state: string;
  generation: number | null;
  created_at: number;
  updated_at: number;
}

/** Fields of a command beyond its id and kind. */
export interface CommandBodyFields {
  text?: string;
  requestId?: string;
  decision?: "approve" | "deny";
  reason?: string;
}

export interface StoredCommand {
  record: CommandRecord;
  fingerprint: string;
}

function toStored(row: RawCommand): StoredCommand {
  const body = JSON.parse(row.body) as CommandBodyFields;
  return {
    fingerprint: row.fingerprint,
    record: {
      commandId: row.command_id,
      controllerSeq: row.controller_seq,
      type: row.kind as CommandType,
      ...body,
      state: row.state as CommandState,
      ...(row.generation === null ? {} : { generation: row.generation }),
      createdAt: new Date(row.created_at).toISOString(),
      updatedAt: new Date(row.updated_at).toISOString(),
    },
  };
}

/** The command as it reaches the runner serving `generation`. */
export function commandFrame(record: CommandRecord, generation: number): CommandFrame {
  const frame: CommandFrame = {
    type: "command",
    controllerSeq: record.controllerSeq,
    commandId: record.commandId,
    kind: record.type,
    state: record.state === "unknown" ? "unknown" : record.state === "delivered" ? "delivered" : "queued",
  };
  if (record.text !== undefined) frame.text = record.text;
  if (record.requestId !== undefined) frame.requestId = record.requestId;
  if (record.decision !== undefined) frame.decision = record.decision;
  if (record.reason !== undefined) frame.reason = record.reason;
  frame.generation = generation;
  return frame;
}

/** Rows of the commands table. */
export class CommandStore {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  find(commandId: string): StoredCommand | null {
    const row = this.sql.exec<RawCommand>("SELECT * FROM commands WHERE command_id = ?", commandId).toArray()[0];
    return row ? toStored(row) : null;
  }

  insert(input: {
    commandId: string;
    controllerSeq: number;
    kind: CommandType;
    body: CommandBodyFields;
    fingerprint: string;
    /** The generation the command names, if it names one. */
    generation: number | null;
    now: number;
  }): CommandRecord {
    this.sql.exec(
      `INSERT INTO commands (command_id, controller_seq, kind, body, fingerprint, state, generation, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)`,
      input.commandId,
      input.controllerSeq,
      input.kind,
      JSON.stringify(input.body),
      input.fingerprint,
      input.generation,
      input.now,
      input.now,
    );
    return (this.find(input.commandId) as StoredCommand).record;
  }

  /** `delivery`: the epoch and generation it was delivered to; a command is bound to the first. */
  setState(
    commandId: string,
    state: CommandState,
    now: number,
    delivery?: { epoch: number; generation: number },
  ): CommandRecord {
    this.sql.exec(
      `UPDATE commands SET state = ?, updated_at = ?, delivered_epoch = COALESCE(?, delivered_epoch),
       generation = COALESCE(generation, ?) WHERE command_id = ?`,
      state,
      now,
      delivery?.epoch ?? null,
      delivery?.generation ?? null,
      commandId,
    );
    return (this.find(commandId) as StoredCommand).record;
  }

  /**
   * Commands the runner of `generation` has not confirmed as applied or rejected, oldest first:
   * those bound to it and those bound to none yet (never to an older generation's).
   */
  unacked(generation: number): CommandRecord[] {
    return this.sql
      .exec<RawCommand>(
        `SELECT * FROM commands WHERE state IN ('queued', 'delivered', 'unknown')
         AND (generation IS NULL OR generation = ?) ORDER BY controller_seq`,
        generation,
      )
      .toArray()
      .map((row) => toStored(row).record);
  }

  /** A new claim: whatever reached the previous runner unconfirmed may or may not have run. */
  markUnconfirmedUnknown(now: number): number {
    return this.sql.exec("UPDATE commands SET state = 'unknown', updated_at = ? WHERE state = 'delivered'", now)
      .rowsWritten;
  }

  /**
   * A new generation: whatever an older one was sent and never confirmed may or may not have
   * run, and is never sent to the new one.
   */
  retireOlderGenerations(generation: number, now: number): number {
    return this.sql.exec(
      "UPDATE commands SET state = 'unknown', updated_at = ? WHERE state IN ('queued', 'delivered') AND generation < ?",
      now,
      generation,
    ).rowsWritten;
  }

  markQueuedDelivered(epoch: number, generation: number, now: number): void {
    this.sql.exec(
      `UPDATE commands SET state = 'delivered', delivered_epoch = ?, generation = ?, updated_at = ?
       WHERE state = 'queued' AND (generation IS NULL OR generation = ?)`,
      epoch,
      generation,
      now,
      generation,
    );
  }
}
