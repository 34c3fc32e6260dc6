import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CommandFile } from "../../../runner-bridge/src/command-file.ts";
import { tempDir } from "../harness/bridge.ts";

describe("a command file (the inbox, the control file)", () => {
  it("writes a command at most once and survives a torn line left by a crash", async () => {
    const file = path.join(tempDir("inbox-"), "inbox.ndjson");
    const inbox = new CommandFile(file);
    expect(await inbox.appendOnce([{ commandId: "c1", line: "hello" }])).toBe("written");
    expect(await inbox.appendOnce([{ commandId: "c1", line: "hello" }])).toBe("present");
    fs.appendFileSync(file, '{"commandId":"c2","li'); // a bridge died mid-write
    expect(inbox.has("c2")).toBe(false);
    expect(await inbox.appendOnce([{ commandId: "c2", line: "again" }])).toBe("written");
    expect(inbox.read().map((e) => e.commandId)).toEqual(["c1", "c2"]);
  });

  it("writes nothing for a bridge that halted (was fenced) while it waited for the lock", async () => {
    const file = path.join(tempDir("inbox-"), "inbox.ndjson");
    const inbox = new CommandFile(file);
    expect(await inbox.appendOnce([{ commandId: "c1", line: "late" }], () => true)).toBe("abandoned");
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });
});
