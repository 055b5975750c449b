/**
 * What a `pivot` command is: an `effect/cli` command (typed flags and arguments, help with examples) plus its usage
 * line. Commands talk to the world only through the `CliIo` service, so tests run them without a terminal. Adding a
 * command is one entry in `Catalog.ts`.
 */
import * as Cause from "effect/Cause"
import type * as Console from "effect/Console"
import * as Context from "effect/Context"
import type { Command as CliCommand } from "effect/cli"
import * as Effect from "effect/Effect"
import * as EffectExit from "effect/Exit"
import * as Schema from "effect/Schema"
import type { ParsedArgs } from "../FastArgs.ts"

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
  /**
   * The flags and arguments given to `Command.make`, for a command that also runs without effect/cli (`Fast`): the
   * build writes what effect/cli declares in them for the plain command line (`Precompute.ts`, ADR 0048).
   */
  readonly flags?: Readonly<Record<string, unknown>> | undefined
}

/**
 * A command's handler in a module that does not import effect/cli (ADR 0048): the options effect/cli would hand it for
 * arguments read in a plain form (`FastArgs.ts`), or `undefined` when only effect/cli can tell (a value it would
 * refuse or transform otherwise), and the handler itself, which the effect/cli command runs too.
 */
export interface Fast<O> {
  readonly options: (args: ParsedArgs) => O | undefined
  readonly run: (options: O) => Effect.Effect<void, Reported, CliIo>
}

/** The console a command's `Console.log` writes to: the `Io`'s lines. */
export const consoleOf = (io: Io): Console.Console =>
  Object.assign(Object.create(globalThis.console), {
    log: (...args: ReadonlyArray<unknown>) => io.out(args.map(String).join(" ")),
    info: (...args: ReadonlyArray<unknown>) => io.out(args.map(String).join(" ")),
    error: (...args: ReadonlyArray<unknown>) => io.err(args.map(String).join(" ")),
    warn: (...args: ReadonlyArray<unknown>) => io.err(args.map(String).join(" ")),
  }) as Console.Console

/**
 * The process's exit code for how a run ended: 0 on success, a `Reported` failure's own code, 2 when effect/cli showed
 * the help for wrong usage, and otherwise 1 after one line `pivot: <message>` on stderr.
 */
export const exitCodeOf = (io: Io, exit: EffectExit.Exit<unknown, unknown>): number => {
  if (EffectExit.isSuccess(exit)) return Exit.ok
  const error = Cause.squash(exit.cause) as { readonly _tag?: string; readonly code?: number }
  if (error?._tag === "Reported" && typeof error.code === "number") return error.code
  if (error?._tag === "ShowHelp") return Exit.usage
  io.err(`pivot: ${String((error as { message?: unknown })?.message ?? error)}`)
  return Exit.failure
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

/** The process's standard streams as an `Io`. */
export const processIo = (): Io => ({
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  isTTY: process.stdout.isTTY === true,
  columns: process.stdout.isTTY === true ? process.stdout.columns : undefined,
  env: process.env,
  errIsTTY: process.stderr.isTTY === true,
  progress: true,
  errRewrite: (text) => process.stderr.write(`\r\x1b[2K${text}`),
})
