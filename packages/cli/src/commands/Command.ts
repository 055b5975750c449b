/**
 * What a `pivot` command is: a name, a one-line summary, its usage, and a function from arguments to an exit code
 * (synchronous, or a promise for commands that read a database). Commands talk to the world only through `Io`, so
 * tests run them without a terminal.
 */

/** Where a command writes, and what it knows about the terminal. */
export interface Io {
  /** Writes one line to standard output. */
  readonly out: (line: string) => void
  /** Writes one line to standard error. */
  readonly err: (line: string) => void
  /** Whether standard output is a terminal (colours only then). */
  readonly isTTY: boolean
  /** The terminal's width, when known. */
  readonly columns: number | undefined
  /** Environment variables (`NO_COLOR`). */
  readonly env: Readonly<Record<string, string | undefined>>
}

/** Exit codes: success, failure, wrong usage. */
export const Exit = { ok: 0, failure: 1, usage: 2 } as const

/** A `pivot` command. */
export interface Command {
  readonly name: string
  /** Arguments in the usage line, e.g. `[--example FILE] [--json]`. */
  readonly args: string
  readonly summary: string
  /** Runs the command with the arguments after its name; answers the exit code. */
  readonly run: (args: ReadonlyArray<string>, io: Io) => number | Promise<number>
}

/** Thrown by argument parsing: the command prints the message and its usage, and exits with `Exit.usage`. */
export class UsageError extends Error {}

/** What `parseOptions` accepts: options taking a value, boolean flags, and how many positional arguments. */
export interface OptionSpec {
  readonly values: ReadonlyArray<string>
  readonly flags: ReadonlyArray<string>
  /** Positional arguments allowed (default 0). */
  readonly positionals?: number | undefined
}

/** Parsed arguments. */
export interface Options {
  readonly values: Readonly<Record<string, string>>
  readonly flags: ReadonlySet<string>
  readonly positionals: ReadonlyArray<string>
}

/**
 * Parses `--name value`, `--name=value`, boolean `--flag` options and up to `positionals` positional arguments;
 * anything else is a `UsageError`.
 */
export const parseOptions = (args: ReadonlyArray<string>, spec: OptionSpec): Options => {
  const values: Record<string, string> = {}
  const flags = new Set<string>()
  const positionals: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const [name, inline] = arg.startsWith("--")
      ? [arg.slice(2).split("=")[0]!, arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : undefined]
      : [arg, undefined]
    if (spec.flags.includes(name) && arg.startsWith("--") && inline === undefined) flags.add(name)
    else if (spec.values.includes(name) && arg.startsWith("--")) {
      const value = inline ?? args[++i]
      if (value === undefined || value === "") throw new UsageError(`--${name} needs a value`)
      values[name] = value
    } else if (!arg.startsWith("-") && positionals.length < (spec.positionals ?? 0)) positionals.push(arg)
    else throw new UsageError(`unknown argument: ${arg}`)
  }
  return { values, flags, positionals }
}
