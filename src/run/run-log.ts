import { type JoinedPage, LogCore, type LogState, type ReadLimits } from "../log/log.ts";
import type { LogPosition, OffsetRef } from "../log/offsets.ts";
import { type ProducerState, RUNNER_PRODUCER_RULES } from "../log/producers.ts";
import { type PageRead, readPage } from "../log/reader.ts";
import type { RunEvent } from "../protocol/index.ts";
import { ClaimEpoch, generationProducer } from "./claim-epoch.ts";

/** An event before it has a seq: a control event, or a runner event with its sourceSeq. */
export interface EventDraft {
  epoch: number;
  sourceSeq?: number;
  /** With sourceSeq: the generation that sent it. */
  generation?: number;
  type: string;
  data: unknown;
  /** When it is stored. */
  time: number;
  /** Runner events: when the agent wrote it, as the runner reported (null: it did not say). */
  agentTime?: number | null;
}

const decoder = new TextDecoder();

/** Each appended event's JSON, serialised once for its log entry and reused for live viewers. */
const serialised = new WeakMap<RunEvent, string>();

/** The event's JSON as stored: JSON.stringify of it, remembered for events this store appended. */
export function eventJson(event: RunEvent): string {
  let text = serialised.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    serialised.set(event, text);
  }
  return text;
}

/** A stored log entry is the event's JSON, byte for byte what viewers and stream readers get. */
export function decodeEvent(body: Uint8Array): RunEvent {
  return JSON.parse(decoder.decode(body)) as RunEvent;
}

/**
 * The run's event log over the log core: events as they are stored (JSON, one entry each, seqs
 * from 1), runner events judged per generation's producer row, and the claim epoch kept there.
 * Callers hold the transaction.
 */
export class RunLog {
  private readonly sql: SqlStorage;
  // Private: the run core reaches the log only through the operations below.
  private readonly core: LogCore;
  private readonly claimEpoch: ClaimEpoch;

  constructor(sql: SqlStorage) {
    this.sql = sql;
    // Each RunLog lives for one operation or read, inside its transaction: reads are remembered.
    this.core = new LogCore(sql, RUNNER_PRODUCER_RULES, { memo: true });
    this.claimEpoch = new ClaimEpoch(this.core.producers);
  }

  /** Creates the run's empty log, with the run. */
  init(): void {
    this.core.init();
  }

  /** Closes the log once the run is terminal: its stream reads as closed. */
  close(): void {
    this.core.close(null);
  }

  /** Drops every stored event (a purge). */
  clear(): void {
    this.core.clear();
  }

  /** The log's tail and whether it is closed; throws before init (a run always has its log). */
  state(): LogState {
    return this.core.mustState();
  }

  /** The log's tail, or null before the run's log exists. */
  tail(): LogPosition | null {
    return this.core.state()?.tail ?? null;
  }

  /** Where the event at `seq` ends (null past the tail): a reader resumes after it. */
  position(seq: number): LogPosition | null {
    return this.core.position(seq);
  }

  /** Events after `from`, their JSON joined by `separator`, within `limits` (the viewer replay). */
  readJoined(from: LogPosition, limits: ReadLimits, separator: string): JoinedPage {
    return this.core.readJoined(from, limits, separator);
  }

  /** A Durable Streams read of the log from `offset`, JSON mode. */
  readStreamPage(offset: OffsetRef, maxBytes: number): PageRead {
    return readPage(this.core, offset, true, maxBytes);
  }

  /** The epoch of the newest claim, 0 before the first. */
  claimEpochNow(): number {
    return this.claimEpoch.current();
  }

  /** Opens the next claim epoch and returns it. */
  nextClaimEpoch(now: number): number {
    return this.claimEpoch.increment(now);
  }

  /** Stores a generation's producer state (its epoch at a claim). */
  recordRunnerState(generation: number, state: ProducerState, now: number): void {
    this.core.producers.record(generationProducer(generation), state, now);
  }

  /** A generation's producer state: its epoch and last accepted sourceSeq (null before its first claim). */
  runnerState(generation: number): ProducerState | null {
    return this.core.producers.get(generationProducer(generation));
  }

  /** Appends one control event at the next seq. */
  append(event: EventDraft): RunEvent {
    return this.appendEvents([event])[0] as RunEvent;
  }

  /** The events `drafts` become at the next seqs, not yet stored. */
  toEvents(drafts: readonly EventDraft[]): RunEvent[] {
    let seq = this.core.mustState().tail.seq;
    // A frame's drafts share one arrival time: its ISO form is made once.
    let lastTime = Number.NaN;
    let lastIso = "";
    return drafts.map((draft): RunEvent => {
      seq += 1;
      if (draft.time !== lastTime) {
        lastTime = draft.time;
        lastIso = new Date(draft.time).toISOString();
      }
      // Literals with the keys in the stored order: spreads and a Date per event were a tenth of a frame's time.
      const event: RunEvent =
        draft.sourceSeq === undefined
          ? { seq, epoch: draft.epoch, source: "control", type: draft.type, data: draft.data ?? null, time: lastIso }
          : {
              seq,
              epoch: draft.epoch,
              source: "runner",
              sourceSeq: draft.sourceSeq,
              generation: draft.generation ?? 1,
              type: draft.type,
              data: draft.data ?? null,
              time: lastIso,
            };
      if (draft.agentTime != null) event.agentTime = new Date(draft.agentTime).toISOString();
      return event;
    });
  }

  /** Bytes the log holds: every stored event's JSON. */
  logBytes(): number {
    return this.core.mustState().tail.pos;
  }

  /**
   * True once any generation stored a runner event: read from the few producer rows (`runner`,
   * `runner.g<N>`), since log_blocks has no producer index and scanning it grows with the log, and
   * from the last block, whose producer's row may not yet count its stamps (ProducerTable).
   */
  hasRunnerEvents(): boolean {
    return (
      this.sql
        .exec(
          `SELECT 1 FROM log_producers WHERE (producer_id = 'runner' OR producer_id LIKE 'runner.g%') AND last_seq > 0
           UNION ALL
           SELECT 1 FROM (SELECT producer_id FROM log_blocks ORDER BY first_seq DESC LIMIT 1)
             WHERE producer_id = 'runner' OR producer_id LIKE 'runner.g%'
           LIMIT 1`,
        )
        .toArray().length > 0
    );
  }

  /**
   * When the last runner event was stored (any generation; only the current claim can store
   * one), or null before the first: what the lease and idle deadlines are judged against when
   * they fall due (alarm.ts), so a batch need not move them.
   */
  lastRunnerEventAt(): number | null {
    return this.core.lastStampedTime();
  }

  /**
   * Appends events at the next seqs in one pass. Runner events carry their sourceSeq and
   * generation; `runner` is that generation's producer state their verdicts accepted, recorded in
   * the same transaction. `events` are the drafts as toEvents made them, when the caller has them.
   */
  appendEvents(
    drafts: readonly EventDraft[],
    runner?: { generation: number; state: ProducerState },
    events: RunEvent[] = this.toEvents(drafts),
  ): RunEvent[] {
    this.core.appendTexts(
      events.map((event, index) => ({
        text: eventJson(event),
        time: (drafts[index] as EventDraft).time,
        producer:
          event.sourceSeq === undefined
            ? null
            : { producerId: generationProducer(event.generation ?? 1), epoch: event.epoch, seq: event.sourceSeq },
      })),
    );
    if (runner) {
      this.core.producers.record(generationProducer(runner.generation), runner.state, drafts[0]?.time ?? Date.now());
    }
    return events;
  }

  /** The stored runner event of `generation` at `sourceSeq`, to compare a resend with. */
  runnerEvent(generation: number, sourceSeq: number): { type: string; data: unknown } | null {
    const entry = this.core.entryForProducerSeq(generationProducer(generation), sourceSeq);
    if (!entry) return null;
    const { type, data } = decodeEvent(entry.body);
    return { type, data };
  }

  /**
   * Events with seq > `after`: at most `limit` of them and about `maxBytes` of JSON (one event
   * past the byte bound at most, so a page always makes progress). `hasMore` while the log goes on.
   */
  eventsAfter(after: number, limit: number, maxBytes: number): { events: RunEvent[]; hasMore: boolean } {
    const from = this.core.position(after);
    if (!from) return { events: [], hasMore: false };
    const page = this.core.read(from, { maxBytes, maxEntries: limit });
    return { events: page.entries.map((entry) => decodeEvent(entry.body)), hasMore: !page.upToDate };
  }
}
