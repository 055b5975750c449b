/**
 * The `pivot` command line: a small dispatcher from `argv` to a command. `pivot help` prints the usage; no command
 * or an unknown one prints it to standard error and exits with 2.
 */
import { Exit, type Io, UsageError } from "./commands/Command.ts"
import { all } from "./commands/index.ts"

export type { Io } from "./commands/Command.ts"

/** The usage text: each command's synopsis, with its summary on the next line. */
export const usage = (): string => {
  const rows = all.map((command) => [`${command.name} ${command.args}`.trim(), command.summary] as const)
  rows.push(["help", "show this help (or `pivot <command> --help`)"])
  return [
    "pivot: an event-sourced context-window manager for LLM agents",
    "",
    "Usage: pivot <command> [options]",
    "",
    "Commands:",
    ...rows.flatMap(([synopsis, summary]) => [`  ${synopsis}`, `      ${summary}`]),
    "",
    "Exit codes: 0 success, 1 failure, 2 wrong usage.",
  ].join("\n")
}

/** Runs `pivot` with the arguments after the program name; answers the exit code once the command is done. */
export const run = async (argv: ReadonlyArray<string>, io: Io): Promise<number> => {
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
    return await command.run(args, io)
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
