/** `agent-run completion bash|zsh`: a completion script written from the command table in args.ts. */
import { COMMANDS, EXIT, type ExitCode, UsageError } from "./args.ts";
import type { Context } from "./context.ts";
import { OUTPUT_FORMATS } from "./output.ts";
import { RunStatus } from "../../src/protocol/index.ts";

const GLOBAL = ["--url", "--key", "--help"];
/** Flags that take a value (zsh must know; bash completes words either way). */
const TAKES_VALUE = new Set(["--url", "--key"]);

/** Flags whose values are a closed set, completed as such. */
const VALUES: Record<string, readonly string[]> = {
  "--output": OUTPUT_FORMATS,
  "--status": RunStatus.options,
  "--role": ["viewer", "runner"],
};

interface Entry {
  name: string;
  summary: string;
  flags: string[];
  /** Words for the positional that is a closed set (recover's action, completion's shell). */
  words: string[];
  /** Which positional (1-based) takes them. */
  wordsAt: number;
}

function entries(): Entry[] {
  return Object.entries(COMMANDS).map(([name, spec]) => {
    const at = spec.args.findIndex((arg) => arg.includes("|"));
    const words = at >= 0 ? (spec.args[at] as string).split("|") : [];
    for (const [flag, option] of Object.entries(spec.options as Record<string, { type: string }>)) {
      if (option.type === "string") TAKES_VALUE.add(`--${flag}`);
    }
    return {
      name,
      summary: spec.summary,
      flags: [...Object.keys(spec.options).map((flag) => `--${flag}`), ...GLOBAL],
      words,
      wordsAt: at + 1,
    };
  });
}

function bash(): string {
  const cases = entries()
    .map((e) => `    ${e.name}) flags="${e.flags.join(" ")}"; words="${e.words.join(" ")}" ;;`)
    .join("\n");
  const values = Object.entries(VALUES)
    .map(([flag, list]) => `    ${flag}) COMPREPLY=($(compgen -W "${list.join(" ")}" -- "$cur")); return ;;`)
    .join("\n");
  return `# agent-run completion for bash: eval "$(agent-run completion bash)"
_agent_run() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} flags="" words=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${entries()
      .map((e) => e.name)
      .join(" ")} --help --version" -- "$cur"))
    return
  fi
  case $prev in
${values}
  esac
  case \${COMP_WORDS[1]} in
${cases}
  esac
  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur"));
  else COMPREPLY=($(compgen -W "$words" -- "$cur")); fi
}
complete -F _agent_run agent-run
`;
}

const quote = (text: string) => text.replaceAll("'", "'\\''").replaceAll(":", "\\:");

function zsh(): string {
  const commands = entries()
    .map((e) => `    '${e.name}:${quote(e.summary)}'`)
    .join("\n");
  const flagSpec = (flag: string) => {
    const closed = VALUES[flag];
    if (closed) return `'${flag}[]:value:(${closed.join(" ")})'`;
    return TAKES_VALUE.has(flag) ? `'${flag}[]:value: '` : `'${flag}[]'`;
  };
  const cases = entries()
    .map((e) => {
      // Positionals before the closed one take any word (a run id).
      const before = Array.from({ length: Math.max(0, e.wordsAt - 1) }, (_, i) => ` '${i + 1}:argument: '`).join("");
      const words = e.words.length > 0 ? `${before} '${e.wordsAt}:word:(${e.words.join(" ")})'` : "";
      return `    ${e.name}) _arguments ${e.flags.map(flagSpec).join(" ")}${words} '*:argument:' ;;`;
    })
    .join("\n");
  return `#compdef agent-run
# agent-run completion for zsh: eval "$(agent-run completion zsh)" (after compinit)
_agent_run() {
  local -a commands
  commands=(
${commands}
  )
  if (( CURRENT == 2 )); then _describe command commands; return; fi
  local command=$words[2]
  shift words; (( CURRENT-- ))
  case $command in
${cases}
  esac
}
compdef _agent_run agent-run
`;
}

export async function completion(ctx: Context): Promise<ExitCode> {
  const shell = ctx.args[0];
  if (shell !== "bash" && shell !== "zsh") {
    throw new UsageError(`completion takes bash or zsh, got ${shell}`, ctx.command);
  }
  process.stdout.write(shell === "bash" ? bash() : zsh());
  return EXIT.ok;
}
