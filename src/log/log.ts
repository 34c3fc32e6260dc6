import { LOG_START, type LogPosition, type OffsetRef } from "./offsets.ts";
import { type ProducerClaim, type ProducerRules, ProducerTable } from "./producers.ts";

/**
 * The log core shared by every append-only log in the control plane: a run's event log and a
 * Durable Streams stream. It owns entry storage, positions (offsets), producer fencing and
 * closure; what an entry means (bytes of a stream, one JSON event of a run) is the caller's.
 *
 * Everything here is synchronous SQLite inside the caller's transaction (or the implicit one of a
 * Durable Object method that does not await), so judge + append + producer update commit
 * together or not at all.
 */

export interface LogEntry {
  seq: number;
  /** Position after this entry. */
  end: LogPosition;
  body: Uint8Array;
  time: number;
}

export interface LogState {
  tail: LogPosition;
  closed: boolean;
  /** The producer request that closed the log, so a retry of it is recognised as a duplicate. */
  closedBy: ProducerClaim | null;
}

export interface ReadLimits {
  /** Stop before this many body bytes (at least one entry is always returned). */
  maxBytes: number;
  maxEntries: number;
}

export interface LogPage {
  entries: LogEntry[];
  /** Where the next read starts: the end of the last entry, or the start position. */
  next: LogPosition;
  /** True when `next` is the tail. */
  upToDate: boolean;
}

/** A page of entries as one buffer: their bodies joined by a separator. */
export interface JoinedPage {
  body: Uint8Array;
  count: number;
  /** Where the next read starts: the end of the last entry, or the start position. */
  next: LogPosition;
  upToDate: boolean;
}

/** Part size of a joined page (readJoined), well under the 2 MB a SQLite string may hold here. */
const JOIN_PART_BYTES = 512 * 1024;
const encoder = new TextEncoder();

export type ResolvedOffset = { kind: "ok"; position: LogPosition } | { kind: "beyond_tail" } | { kind: "unknown" };

interface RawState extends Record<string, SqlStorageValue> {
  tail_seq: number;
  tail_pos: number;
  closed: number;
  closed_by_producer: string | null;
  closed_by_epoch: number | null;
  closed_by_seq: number | null;
}

interface RawEntry extends Record<string, SqlStorageValue> {
  seq: number;
  end_pos: number;
  body: ArrayBuffer;
  time: number;
}

interface RawPart extends Record<string, SqlStorageValue> {
  count: number;
  seq: number;
  pos: number;
  body: ArrayBuffer;
}

/** The most UTF-16 units bound as one string: at 3 bytes each, under the 2 MB SQLite takes. */
const MAX_BOUND_CHARS = 600_000;

/** Bytes of `text` in UTF-8; ASCII text (most of it) is not encoded to learn that. */
export function utf8Length(text: string): number {
  return NON_ASCII.test(text) ? encoder.encode(text).byteLength : text.length;
}
const NON_ASCII = /[\u0080-\uffff]/;

/** A copy of exactly the bytes of `view`, as SQLite takes them. */
function toBuffer(view: Uint8Array): ArrayBuffer {
  if (view.byteOffset === 0 && view.byteLength === view.buffer.byteLength && view.buffer instanceof ArrayBuffer)
    return view.buffer;
  return view.slice().buffer as ArrayBuffer;
}

export class LogCore {
  private readonly sql: SqlStorage;
  readonly producers: ProducerTable;

  constructor(sql: SqlStorage, rules: ProducerRules) {
    this.sql = sql;
    this.producers = new ProducerTable(sql, rules);
  }

  state(): LogState | null {
    const row = this.sql.exec<RawState>("SELECT * FROM log_state WHERE singleton = 1").toArray()[0];
    if (!row) return null;
    const closedBy =
      row.closed_by_producer === null
        ? null
        : { producerId: row.closed_by_producer, epoch: row.closed_by_epoch ?? 0, seq: row.closed_by_seq ?? 0 };
    return { tail: { seq: row.tail_seq, pos: row.tail_pos }, closed: row.closed === 1, closedBy };
  }

  mustState(): LogState {
    const state = this.state();
    if (!state) throw new Error("log not initialised");
    return state;
  }

  /** Starts an empty, open log. */
  init(): void {
    this.sql.exec("INSERT INTO log_state (singleton, tail_seq, tail_pos, closed) VALUES (1, 0, 0, 0)");
  }

  /**
   * Appends one entry per body at the tail and returns the new tail. `producer` stamps the entries
   * with the request that wrote them (the caller has judged it and records the producer state).
   */
  append(bodies: readonly Uint8Array[], time: number, producer: ProducerClaim | null = null): LogPosition {
    return this.appendEach(bodies.map((body) => ({ body, time, producer })));
  }

  /** Appends entries that each carry their own time and producer stamp (a runner's batch). */
  appendEach(entries: readonly { body: Uint8Array; time: number; producer: ProducerClaim | null }[]): LogPosition {
    let { seq, pos } = this.mustState().tail;
    for (const { body, time, producer } of entries) {
      seq += 1;
      pos += body.byteLength;
      this.sql.exec(
        "INSERT INTO log_entries (seq, end_pos, body, time, producer_id, producer_epoch, producer_seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
        seq,
        pos,
        toBuffer(body),
        time,
        producer?.producerId ?? null,
        producer?.epoch ?? null,
        producer?.seq ?? null,
      );
    }
    this.sql.exec("UPDATE log_state SET tail_seq = ?, tail_pos = ? WHERE singleton = 1", seq, pos);
    return { seq, pos };
  }

  /**
   * Appends entries whose bodies are text (stored as its UTF-8 bytes) in one statement: the
   * entries travel as one JSON array bound to `json_each`, so a 500-event frame costs one call
   * into SQLite instead of 500. Each body goes as a JSON string, which SQLite unescapes back to
   * exactly the text given. A batch whose array could pass SQLite's 2 MB string bound is split.
   */
  appendTexts(entries: readonly { text: string; time: number; producer: ProducerClaim | null }[]): LogPosition {
    let { seq, pos } = this.mustState().tail;
    let items: string[] = [];
    let chars = 0;
    let first = seq + 1;
    const flush = () => {
      if (items.length === 0) return;
      this.sql.exec(
        `INSERT INTO log_entries (seq, end_pos, body, time, producer_id, producer_epoch, producer_seq)
         SELECT ? + key, value ->> 0, CAST(value ->> 2 AS BLOB), value ->> 1, value ->> 3, value ->> 4, value ->> 5
         FROM json_each(?)`,
        first,
        `[${items.join(",")}]`,
      );
      first = seq + 1;
      items = [];
      chars = 0;
    };
    for (const { text, time, producer } of entries) {
      pos += utf8Length(text);
      const stamp =
        producer === null ? "" : `,${JSON.stringify(producer.producerId)},${producer.epoch},${producer.seq}`;
      const item = `[${pos},${time},${JSON.stringify(text)}${stamp}]`;
      if (chars + item.length > MAX_BOUND_CHARS) flush();
      seq += 1;
      if (item.length > MAX_BOUND_CHARS) {
        // Escaping (`"` and `\` double) can push one legal entry past the bound on its own: it goes
        // alone, as its UTF-8 bytes in a blob, which has no string bound to pass.
        this.sql.exec(
          "INSERT INTO log_entries (seq, end_pos, body, time, producer_id, producer_epoch, producer_seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
          seq,
          pos,
          toBuffer(encoder.encode(text)),
          time,
          producer?.producerId ?? null,
          producer?.epoch ?? null,
          producer?.seq ?? null,
        );
        first = seq + 1;
        continue;
      }
      items.push(item);
      chars += item.length + 1;
    }
    flush();
    this.sql.exec("UPDATE log_state SET tail_seq = ?, tail_pos = ? WHERE singleton = 1", seq, pos);
    return { seq, pos };
  }

  /** Entries after `from`, bounded by `limits` (at least one entry when there is one). */
  read(from: LogPosition, limits: ReadLimits): LogPage {
    const tail = this.mustState().tail;
    if (from.seq >= tail.seq) return { entries: [], next: from, upToDate: from.seq === tail.seq };
    // Both bounds are in the query, so the cursor runs to its end: a statement left open would
    // keep the table locked against clear()'s DROP.
    const entries = this.sql
      .exec<RawEntry>(
        `SELECT seq, end_pos, body, time FROM log_entries
         WHERE seq > ?1 AND (seq = ?1 + 1 OR end_pos <= ?2) ORDER BY seq LIMIT ?3`,
        from.seq,
        Math.min(from.pos + limits.maxBytes, Number.MAX_SAFE_INTEGER),
        limits.maxEntries,
      )
      .toArray()
      .map((row) => ({
        seq: row.seq,
        end: { seq: row.seq, pos: row.end_pos },
        body: new Uint8Array(row.body),
        time: row.time,
      }));
    const next = entries[entries.length - 1]?.end ?? from;
    return { entries, next, upToDate: next.seq === tail.seq };
  }

  /**
   * Entries after `from`, bounded by `limits` (at least one entry when there is one), as their
   * bodies joined by `separator`: the page is built by SQLite's group_concat, so no row becomes a
   * JavaScript object. The byte bound is a range on `end_pos`, which counts body bytes. SQLite
   * (and Durable Objects, at 2 MB) bounds one string, so the page comes back in parts of about
   * JOIN_PART_BYTES each, joined here.
   */
  readJoined(from: LogPosition, limits: ReadLimits, separator: string): JoinedPage {
    const tail = this.mustState().tail;
    if (from.seq >= tail.seq) return { body: new Uint8Array(0), count: 0, next: from, upToDate: from.seq === tail.seq };
    const maxPos = Math.min(from.pos + limits.maxBytes, Number.MAX_SAFE_INTEGER);
    const parts: RawPart[] = [];
    let at = from;
    let entries = limits.maxEntries;
    while (entries > 0 && at.seq < tail.seq) {
      // One part: entries up to JOIN_PART_BYTES past `at`, and the next one whatever its size
      // (while under the page's byte bound, or always for the page's first entry). The rows
      // reach group_concat in the subquery's order (a subquery with LIMIT is not flattened into
      // the aggregate); an ORDER BY inside group_concat would sort them again, at twice the rows
      // read. test/edge/log-append.test.ts checks the order.
      const part = this.sql
        .exec<RawPart>(
          `SELECT count(*) AS count, max(seq) AS seq, max(end_pos) AS pos,
                  CAST(group_concat(body, ?4) AS BLOB) AS body
           FROM (SELECT seq, end_pos, body FROM log_entries
                 WHERE seq > ?1 AND (end_pos <= ?2 OR (seq = ?1 + 1 AND (?5 OR end_pos <= ?6)))
                 ORDER BY seq LIMIT ?3)`,
          at.seq,
          Math.min(at.pos + JOIN_PART_BYTES, maxPos),
          entries,
          separator,
          parts.length === 0 ? 1 : 0,
          maxPos,
        )
        .one();
      if (part.count === 0) break;
      parts.push(part);
      entries -= part.count;
      at = { seq: part.seq, pos: part.pos };
    }
    const last = parts[parts.length - 1];
    if (!last) return { body: new Uint8Array(0), count: 0, next: from, upToDate: false };
    const gap = encoder.encode(separator);
    let size = gap.byteLength * (parts.length - 1);
    for (const part of parts) size += part.body.byteLength;
    const body = new Uint8Array(size);
    let offset = 0;
    let count = 0;
    for (const part of parts) {
      if (offset > 0) {
        body.set(gap, offset);
        offset += gap.byteLength;
      }
      body.set(new Uint8Array(part.body), offset);
      offset += part.body.byteLength;
      count += part.count;
    }
    const next = { seq: last.seq, pos: last.pos };
    return { body, count, next, upToDate: next.seq === tail.seq };
  }

  /** The position after entry `seq` (0: the start), or null past the tail. */
  position(seq: number): LogPosition | null {
    if (seq === 0) return LOG_START;
    const row = this.sql.exec<{ end_pos: number }>("SELECT end_pos FROM log_entries WHERE seq = ?", seq).toArray()[0];
    return row ? { seq, pos: row.end_pos } : null;
  }

  /** Checks a client offset against this log: it must name a real entry boundary. */
  resolve(ref: OffsetRef): ResolvedOffset {
    const tail = this.mustState().tail;
    if (ref.kind === "start") return { kind: "ok", position: LOG_START };
    if (ref.kind === "now") return { kind: "ok", position: tail };
    if (ref.seq > tail.seq) return { kind: "beyond_tail" };
    const position = this.position(ref.seq);
    if (!position || position.pos !== ref.pos) return { kind: "unknown" };
    return { kind: "ok", position };
  }

  /** Marks the log closed; nothing can be appended afterwards. */
  close(by: ProducerClaim | null): void {
    this.sql.exec(
      "UPDATE log_state SET closed = 1, closed_by_producer = ?, closed_by_epoch = ?, closed_by_seq = ? WHERE singleton = 1",
      by?.producerId ?? null,
      by?.epoch ?? null,
      by?.seq ?? null,
    );
  }

  /**
   * The entry a producer stamped with `seq`, for callers that compare a retry's content. Only for
   * producers that store one entry per seq with no gap up to their `lastSeq` (a run's runners),
   * so their entries' seqs rise with log seq. There is no index on the stamp (it cost a write per
   * entry): starting at the highest log seq it can have, each probe finds this producer's nearest
   * entry at or below and jumps down by the stamps still to go. Inside one producer's stretch of
   * the log, with other entries sparse, that converges in a few probes; other producers' entries
   * above it (a later runner generation) are read once, on the way down.
   */
  entryForProducerSeq(producerId: string, seq: number): LogEntry | null {
    const state = this.producers.get(producerId);
    if (!state || seq < this.producers.rules.firstSeq || seq > state.lastSeq) return null;
    // Its entries stamped seq+1..lastSeq lie above it.
    let hi = this.mustState().tail.seq - (state.lastSeq - seq);
    while (hi >= 1) {
      const row = this.sql
        .exec<RawEntry & { producer_seq: number }>(
          `SELECT seq, end_pos, body, time, producer_seq FROM log_entries
           WHERE seq <= ? AND producer_id = ? ORDER BY seq DESC LIMIT 1`,
          hi,
          producerId,
        )
        .toArray()[0];
      if (!row || row.producer_seq < seq) return null;
      if (row.producer_seq === seq) {
        return {
          seq: row.seq,
          end: { seq: row.seq, pos: row.end_pos },
          body: new Uint8Array(row.body),
          time: row.time,
        };
      }
      hi = row.seq - (row.producer_seq - seq);
    }
    return null;
  }

  /**
   * Removes the log entirely (entries, producers, state). The entries table is dropped and made
   * again from its own definition (and its indexes', if a later migration adds any): a DELETE
   * would be billed one row written per entry, the drop a handful.
   */
  clear(): void {
    const definitions = this.sql
      .exec<{ sql: string }>(
        "SELECT sql FROM sqlite_master WHERE tbl_name = 'log_entries' AND sql IS NOT NULL ORDER BY type = 'index'",
      )
      .toArray();
    this.sql.exec("DROP TABLE log_entries");
    for (const { sql } of definitions) this.sql.exec(sql);
    this.sql.exec("DELETE FROM log_producers");
    this.sql.exec("DELETE FROM log_state");
  }
}
