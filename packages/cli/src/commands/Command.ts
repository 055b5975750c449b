/**
 * What a `pivot` command is: an `effect/cli` command (typed flags and arguments, help with examples) plus its usage
 * line. Commands talk to the world only through the `CliIo` service, so tests run them without a terminal. Adding a
 * command is one entry in `Catalog.ts`.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type { Command as CliCommand } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

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
  /** Whether standard error is a terminal (a redrawn progress bar only then); default false. */
  readonly errIsTTY?: boolean | undefined
  /** Whether to report progress of long work on standard error (the real process does; tests need not). */
  readonly progress?: boolean | undefined
  /** Rewrites the current standard error line (a progress bar on a terminal); lines are written with `err`. */
  readonly errRewrite?: ((text: string) => void) | undefined
}

/** The `Io` of the running command. */
export class CliIo extends Context.Service<CliIo, Io>()("@pivot/cli/CliIo") {}

/** Exit codes: success, failure, wrong usage. */
export const Exit = { ok: 0, failure: 1, usage: 2 } as const

/** Wrong usage the flag parser cannot see (e.g. two sources named): one line and the usage, exit 2. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { message: Schema.String }) {}

/** A failure the command reports as one line, exit 1. */
export class CliError extends Schema.TaggedError<CliError>()("CliError", { message: Schema.String }) {}

/** The command has printed what went wrong; the process exits with `code`. */
export class Reported extends Schema.TaggedError<Reported>()("Reported", { code: Schema.Number }) {}

/** A registered `pivot` command: the `effect/cli` command and its one-line synopsis (for usage errors). */
export interface Entry {
  readonly name: string
  /** Arguments in the usage line, e.g. `<export.json> [--db FILE]`. */
  readonly synopsis: string
  readonly command: CliCommand.Command<any, any, any, Reported, CliIo>
}

/** Any error of the store or the read side, as one line. */
export const describe = (error: unknown): string =>
  (error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)
  ).replace(/\s*\n\s*/g, " ")

/**
 * Runs a command's program: a `CliError` (or any other failure or defect) is printed as ONE line,
 * `pivot <command>: <what is wrong>`, exit 1; a `UsageError` adds the usage line and a pointer to the help, exit 2.
 */
export const report = <R>(
  name: string,
  synopsis: string,
  program: Effect.Effect<void, unknown, R>,
): Effect.Effect<void, Reported, R | CliIo> =>
  Effect.gen(function* () {
    const io = yield* CliIo
    const exit = yield* Effect.exit(program)
    if (exit._tag === "Success") return
    if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
    const failure = Cause.squash(exit.cause)
    if (failure instanceof Reported) return yield* failure
    if (failure instanceof UsageError) {
      io.err(`pivot ${name}: ${failure.message}`)
      io.err(`Usage: pivot ${name} ${synopsis}`.trimEnd())
      // As the flag parser's usage errors end (Cli.ts), so every wrong usage says where the help is.
      io.err(`Run "pivot ${name} --help" for its flags and examples.`)
      return yield* new Reported({ code: Exit.usage })
    }
    io.err(`pivot ${name}: ${describe(failure)}`)
    return yield* new Reported({ code: Exit.failure })
  })
