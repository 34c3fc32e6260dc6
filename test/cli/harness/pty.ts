/**
 * The CLI under a real pseudo-terminal (util-linux `script`), and a small terminal model that
 * replays what it drew, so a test can assert the screen a person would end up looking at.
 */
import { spawn } from "node:child_process";
import { waitFor } from "../../support/wait.ts";
import { CLI_BIN, type CliOptions, cliEnv, track } from "./cli.ts";

export const ESC = String.fromCharCode(27);
const CSI = new RegExp(`^${ESC}\\[([?0-9;]*)([A-Za-z])`);
const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

export interface PtyProcess {
  /** Everything written to the terminal, control sequences included. */
  output(): string;
  waitForOutput(description: string, predicate: (output: string) => boolean, timeoutMs?: number): Promise<void>;
  waitExit(timeoutMs?: number): Promise<number | null>;
  /** Keys typed at the terminal ("\x03" is Ctrl-C). */
  type(keys: string): void;
  kill(): void;
}

export function startInPty(
  url: string,
  args: string[],
  size: { columns: number; rows: number },
  options: CliOptions = {},
): PtyProcess {
  const command = [process.execPath, CLI_BIN, ...args].map(quote).join(" ");
  const child = spawn(
    "script",
    ["--quiet", "--return", "--command", `stty cols ${size.columns} rows ${size.rows}; exec ${command}`, "/dev/null"],
    { env: { ...cliEnv(url, options), TERM: "xterm-256color" }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  let code: number | null | undefined;
  child.on("exit", (c) => (code = c));
  // SIGKILL to `script` closes the terminal, and the CLI in it gets SIGHUP.
  return track({
    output: () => out,
    async waitForOutput(description, predicate, timeoutMs = 30_000) {
      await waitFor(`the terminal to show ${description}`, () => predicate(out), timeoutMs);
    },
    async waitExit(timeoutMs = 60_000) {
      await waitFor(
        `agent-run in a pty to exit; output: ${JSON.stringify(out.slice(-600))}`,
        () => code !== undefined,
        timeoutMs,
      );
      return code as number | null;
    },
    type: (keys) => child.stdin.write(keys),
    kill: () => child.kill("SIGKILL"),
  });
}

/**
 * Replays terminal output onto a grid: text with autowrap, CR, LF, and the CSI sequences the CLI
 * uses (cursor up A, column G, erase K and J; colours ignored). Returns the rows, right-trimmed,
 * without trailing empty rows.
 */
export function screen(output: string, columns: number): string[] {
  const grid: string[][] = [[]];
  let row = 0;
  let col = 0;
  let pendingWrap = false;
  const line = () => {
    while (grid.length <= row) grid.push([]);
    return grid[row] as string[];
  };
  for (let i = 0; i < output.length; i++) {
    const ch = output[i] as string;
    if (ch === "\x1b" && output[i + 1] === "[") {
      const match = CSI.exec(output.slice(i));
      if (!match) continue;
      i += match[0].length - 1;
      const n = Number.parseInt(match[1] || "0", 10);
      pendingWrap = false;
      if (match[2] === "A") row = Math.max(0, row - Math.max(1, n));
      else if (match[2] === "G") col = Math.max(1, n) - 1;
      else if (match[2] === "K") line().splice(n === 2 ? 0 : col);
      else if (match[2] === "J") {
        line().splice(col);
        grid.splice(row + 1);
      }
      continue;
    }
    if (ch === "\r") {
      col = 0;
      pendingWrap = false;
    } else if (ch === "\n") {
      row++;
      pendingWrap = false;
    } else if (ch >= " ") {
      if (pendingWrap) {
        row++;
        col = 0;
        pendingWrap = false;
      }
      const cells = line();
      while (cells.length < col) cells.push(" ");
      cells[col] = ch;
      if (col === columns - 1) pendingWrap = true;
      else col++;
    }
  }
  const rows = grid.map((cells) => cells.join("").trimEnd());
  while (rows.length > 0 && rows[rows.length - 1] === "") rows.pop();
  return rows;
}
