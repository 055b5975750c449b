/**
 * The `pivot` command line: a small dispatcher from `argv` to a command. `pivot help` (or no command) prints the
 * usage; an unknown command prints it to standard error and exits with 2.
 */
import { Exit, type Io, UsageError } from "./commands/Command.ts"
import { all } from "./commands/index.ts"

export type { Io } from "./commands/Command.ts"

/** The usage text. */
export const usage = (): string => {
  const rows = all.map((command) => [`${command.name} ${command.args}`.trim(), command.summary] as const)
  rows.push(["help", "show this help"])
  const width = Math.max(...rows.map(([left]) => left.length))
  return [
    "pivot: an event-sourced context-window manager for LLM agents",
    "",
    "Usage: pivot <command> [options]",
    "",
    "Commands:",
    ...rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`),
    "",
    "Exit codes: 0 success, 1 failure, 2 wrong usage.",
  ].join("\n")
}

/** Runs `pivot` with the arguments after the program name; answers the exit code. */
export const run = (argv: ReadonlyArray<string>, io: Io): number => {
  const [name, ...args] = argv
  if (name === "help" || name === "--help" || name === "-h") {
    io.out(usage())
    return Exit.ok
  }
  if (name === undefined) {
    io.err(usage())
    return Exit.usage
  }
  const command = all.find((c) => c.name === name)
  if (command === undefined) {
    io.err(`pivot: unknown command "${name}"\n\n${usage()}`)
    return Exit.usage
  }
  if (args.includes("--help") || args.includes("-h")) {
    io.out(`Usage: pivot ${command.name} ${command.args}\n\n${command.summary}`)
    return Exit.ok
  }
  try {
    return command.run(args, io)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.err(`pivot ${command.name}: ${error.message}\nUsage: pivot ${command.name} ${command.args}`)
    return Exit.usage
  }
}

/** The process's standard streams as an `Io`. */
export const processIo = (): Io => ({
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  isTTY: process.stdout.isTTY === true,
  columns: process.stdout.isTTY === true ? process.stdout.columns : undefined,
  env: process.env,
})
