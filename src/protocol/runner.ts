import { INVALID, withParser, z } from "zod";
import { nestsDeeperThan, tooDeepFailure, valueNestsDeeperThan } from "./json.ts";
import { MAX_BATCH_EVENTS, MAX_JSON_DEPTH } from "./limits.ts";
import { fail, invalid, ok, type Result } from "./result.ts";
import { Generation, RecoveryMode, RunnerOutcome } from "./run.ts";

const Epoch = z.number().int().min(1);
const SourceSeq = z.number().int().min(1);

/** One agent event as the runner sends it; the object assigns seq and epoch. */
export const RunnerEvent = z
  .object({
    sourceSeq: SourceSeq,
    type: z.string().min(1).max(200),
    data: z.unknown().optional(),
    /**
     * When the agent wrote it (ISO-8601), as the runner's journal recorded it; kept beside the
     * object's own arrival `time` as the event's `agentTime` (an unparseable one is dropped).
     */
    time: z
      .string()
      .max(64)
      .optional()
      .describe("When the agent wrote it (ISO-8601); stored as the event's agentTime, beside its arrival time"),
  })
  .strict();
export type RunnerEvent = z.infer<typeof RunnerEvent>;

/** Frames a runner sends. */
export const RunnerFrame = z
  .discriminatedUnion("type", [
    z
      .object({
        type: z.literal("hello"),
        runnerId: z.string().min(1).max(200),
        /**
         * Informational: how many journal lines the runner has read. The object does not act on it
         * (its own `ackedSourceSeq` in `claimed` is what the runner resends from); may be omitted.
         */
        lastSourceSeq: z.number().int().min(0).optional(),
        /**
         * The epoch this runner last held, when it reconnects: a newer claim by another runnerId
         * fences it instead; a newer claim by the same runnerId (its own, whose `claimed` it lost)
         * does not.
         */
        epoch: Epoch.optional(),
        /**
         * The agent generation this runner serves. Absent: the current one (a first claim or a
         * takeover). `current + 1` starts a resumed generation while the run is recovering.
         */
        generation: Generation.optional(),
        /**
         * This hello starts the generation it names from a restored checkpoint (`runner-bridge
         * resume`). Outside recovery such a hello without an `epoch` claims only when the newest
         * claim is its own (its first `claimed` was lost): a second resume of the same generation
         * must not take it from the first and replay its events.
         */
        resume: z.literal(true).optional(),
      })
      .strict(),
    z
      .object({
        type: z.literal("events"),
        epoch: Epoch,
        /** The generation the events belong to (absent: 1); must be the one this runner claimed. */
        generation: Generation.optional(),
        events: z.array(RunnerEvent).min(1).max(MAX_BATCH_EVENTS),
      })
      .strict(),
    z.object({ type: z.literal("heartbeat"), epoch: Epoch }).strict(),
    z.object({ type: z.literal("complete"), epoch: Epoch, outcome: RunnerOutcome }).strict(),
    z
      .object({
        type: z.literal("commandAck"),
        epoch: Epoch,
        controllerSeq: z.number().int().min(1),
        commandId: z.string().min(1).max(200),
        state: z.enum(["delivered", "applied", "rejected"]),
      })
      .strict(),
  ])
  .meta({ id: "RunnerFrame", description: "A frame a runner sends" });
export type RunnerFrame = z.infer<typeof RunnerFrame>;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Keys checked with for-in and string compares: Object.keys and a Set per event were most of the
// check's time. for-in also walks inherited enumerable keys; any such key answers INVALID, so zod decides.
function frameKeysOk(value: Json): boolean {
  for (const key in value) {
    if (key !== "type" && key !== "epoch" && key !== "generation" && key !== "events") return false;
  }
  return true;
}

function eventKeysOk(value: Json): boolean {
  for (const key in value) {
    if (key !== "sourceSeq" && key !== "type" && key !== "data" && key !== "time") return false;
  }
  return true;
}

const atLeastOne = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1;

/** One event as RunnerEvent accepts it, checked in place. */
function isRunnerEvent(event: unknown): event is RunnerEvent {
  if (!isObject(event) || !eventKeysOk(event)) return false;
  const { sourceSeq, type, time } = event;
  if (!atLeastOne(sourceSeq) || typeof type !== "string" || type.length < 1 || type.length > 200) return false;
  return time === undefined || (typeof time === "string" && time.length <= 64);
}

/**
 * The `events` frame checked by hand: a runner's hot path, where zod's runtime was a sixth of a
 * frame's CPU. It accepts only what RunnerFrame accepts (the same rules: strict keys, safe
 * integers from 1, type 1..200 characters, time at most 64, 1..MAX_BATCH_EVENTS events) and
 * answers a fresh frame holding the events as they came: each has only RunnerEvent's keys, with
 * the values zod would answer, and the value JSON.parse made is held by nothing else, so copying
 * each event (as zod does) only made garbage. Anything else, every other frame type and every
 * refusal, is INVALID and goes to zod, whose answer (and error) is then the one given.
 * test/edge/runner-frames.test.ts compares both on random frames.
 */
export function fastEventsFrame(input: unknown): RunnerFrame | typeof INVALID {
  if (!isObject(input) || input.type !== "events" || !frameKeysOk(input)) return INVALID;
  const { epoch, generation, events } = input;
  if (!atLeastOne(epoch) || (generation !== undefined && !atLeastOne(generation))) return INVALID;
  if (!Array.isArray(events) || events.length < 1 || events.length > MAX_BATCH_EVENTS) return INVALID;
  for (let index = 0; index < events.length; index++) if (!isRunnerEvent(events[index])) return INVALID;
  const checked = events as RunnerEvent[];
  return generation === undefined
    ? { type: "events", epoch, events: checked }
    : { type: "events", epoch, generation, events: checked };
}

/** RunnerFrame with the events frame's fast path in front of it: what the run's object parses with. */
export const RunnerFrameParser = withParser(RunnerFrame, fastEventsFrame);

/** An events frame's own levels above each event's data: the frame, `events`, the event. */
const EVENT_DATA_LEVEL = 3;

/**
 * A runner frame's text as parseJson and RunnerFrameParser judge it (the same verdict, value and
 * error), in another order: JSON.parse first, since V8's does not recurse and takes any depth,
 * then an events frame's depth is judged on each event's parsed data instead of a scan of the
 * whole text (a ninth of a frame's CPU). Other frames and unparseable text are scanned as before.
 */
export function parseRunnerFrameText(text: string): Result<RunnerFrame> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) return tooDeepFailure("invalid_frame");
    return fail("invalid_json", "not valid JSON");
  }
  const quick = fastEventsFrame(value);
  if (quick !== INVALID && quick.type === "events") {
    for (const event of quick.events) {
      if (valueNestsDeeperThan(event.data, MAX_JSON_DEPTH - EVENT_DATA_LEVEL)) return tooDeepFailure("invalid_frame");
    }
    return ok(quick);
  }
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) return tooDeepFailure("invalid_frame");
  const frame = RunnerFrame.safeParse(value);
  return frame.success ? ok(frame.data) : invalid("invalid_frame", frame.error);
}

/**
 * Why a claim was refused: the run is terminal; it is recovering and this hello does not match
 * its mode; or the hello names a generation the run cannot start.
 */
export const RejectReason = z.enum(["terminal-run", "recovering", "not-resumable"]);
export type RejectReason = z.infer<typeof RejectReason>;

/** A command as it reaches the runner. */
export const CommandFrame = z
  .object({
    type: z.literal("command"),
    controllerSeq: z.number().int().min(1),
    commandId: z.string().min(1).max(200),
    kind: z.enum(["input", "interrupt", "cancel", "approval"]),
    /** queued/delivered: new to this runner; unknown: a predecessor may have applied it. */
    state: z.enum(["queued", "delivered", "unknown"]),
    text: z.string().optional(),
    requestId: z.string().optional(),
    decision: z.enum(["approve", "deny"]).optional(),
    reason: z.string().optional(),
    /** The generation the command was sent to. */
    generation: Generation.optional(),
  })
  .meta({ id: "CommandFrame", description: "A command as it reaches the runner" });
export type CommandFrame = z.infer<typeof CommandFrame>;

/**
 * Frames the object sends to a runner. Not strict: a runner ignores fields it does not know,
 * so the edge can add some without breaking deployed bridges.
 */
export const ServerToRunner = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("claimed"),
      epoch: Epoch,
      /** Within `generation`: resend from ackedSourceSeq + 1. */
      ackedSourceSeq: z.number().int().min(0),
      /** The generation this runner serves. */
      generation: Generation,
      heartbeatMs: z.number().int().min(1),
      commands: z.array(CommandFrame),
    }),
    z.object({ type: z.literal("fenced"), epoch: z.number().int().min(0) }),
    z.object({
      type: z.literal("rejected"),
      reason: RejectReason,
      status: z.string(),
      /** With reason `recovering`: the recovery mode that refused the claim. */
      mode: RecoveryMode.optional(),
    }),
    z.object({ type: z.literal("ack"), highestSourceSeq: z.number().int().min(0) }),
    z.object({ type: z.literal("gap"), expected: SourceSeq }),
    z.object({ type: z.literal("conflict"), sourceSeq: SourceSeq }),
    z.object({ type: z.literal("completed"), status: z.string() }),
    CommandFrame,
    z.object({ type: z.literal("error"), code: z.string(), message: z.string() }),
  ])
  .meta({ id: "ServerToRunner", description: "A frame the run's object sends to its runner" });
export type ServerToRunner = z.infer<typeof ServerToRunner>;
