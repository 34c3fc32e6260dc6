import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { JournalReader } from "../../../runner-bridge/src/journal.ts";
import { formatSentinel } from "../../../runner-bridge/src/sentinel.ts";
import { tempDir } from "../harness/bridge.ts";

describe("the journal reader", () => {
  it("numbers complete lines from 1 and holds back a torn last line until it is finished", () => {
    const file = path.join(tempDir("journal-"), "journal.ndjson");
    fs.writeFileSync(file, 'one\n{"type":"x"}\npart');
    const reader = new JournalReader(file, "nonce-1");
    expect(reader.read(100)).toEqual([
      { lineNo: 1, text: "one" },
      { lineNo: 2, text: '{"type":"x"}' },
    ]);
    expect(reader.read(100)).toEqual([]);
    fs.appendFileSync(file, "ial\n");
    expect(reader.read(100)).toEqual([{ lineNo: 3, text: "partial" }]);
  });

  it("treats only this run's sentinel as the end; a look-alike printed by the agent is data", () => {
    const file = path.join(tempDir("journal-"), "journal.ndjson");
    fs.writeFileSync(
      file,
      [
        '{"__exit":0}',
        formatSentinel("someone-else", { code: 0, signal: null }),
        "last",
        formatSentinel("nonce-1", { code: 3, signal: null }),
        "written by a straggler after the exit",
        "",
      ].join("\n"),
    );
    const reader = new JournalReader(file, "nonce-1");
    const lines = reader.read(100);
    expect(lines.map((l) => l.lineNo)).toEqual([1, 2, 3]);
    expect(lines[0]?.text).toBe('{"__exit":0}');
    expect(reader.exit).toEqual({ code: 3, signal: null });
    expect(reader.totalLines).toBe(3);
    expect(reader.read(100)).toEqual([]);
  });

  it("re-reading from byte 0 reproduces the same lines with the same numbers", () => {
    const file = path.join(tempDir("journal-"), "journal.ndjson");
    fs.writeFileSync(file, `${Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`).join("\n")}\n`);
    const readAll = () => {
      const reader = new JournalReader(file, "n");
      const out: string[] = [];
      for (let batch = reader.read(700); batch.length; batch = reader.read(700)) {
        for (const l of batch) out.push(`${l.lineNo}:${l.text}`);
      }
      return out;
    };
    const first = readAll();
    expect(first).toHaveLength(5000);
    expect(first[4999]).toBe("5000:line 5000");
    expect(readAll()).toEqual(first);
  });
});
