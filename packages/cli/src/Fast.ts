/**
 * Runs a read command without loading effect/cli (issue 32, ADR 0048): when the bundle's entry finds the command's
 * flags in the build-time table (`precomputed.json`, written from effect/cli's own declarations) and the arguments
 * are in a plain form (`FastArgs.ts`), the command's handler — in a module that does not import effect/cli — runs on
 * the options its `Fast.options` makes of them, with the same `Io`, console and exit codes as under effect/cli
 * (`Cli.ts`). Anything else, including a value the handler's reading refuses, runs the command line as before.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { catalog } from "./commands/Catalog.ts"
import { CliIo, consoleOf, exitCodeOf, type Io, processIo } from "./commands/Command.ts"
import { type Declared, parse } from "./FastArgs.ts"

/**
 * The run of `argv` (the arguments after the program name; the first names the command) when the plain command line
 * can read them: the command's exit code once it is done. `undefined` when effect/cli must read them.
 */
export const program = async (
  declared: Declared,
  argv: ReadonlyArray<string>,
  io: Io,
): Promise<Effect.Effect<number> | undefined> => {
  const listing = catalog.find((l) => l.name === argv[0])
  const parsed = parse(declared, argv.slice(1))
  if (listing?.fast === undefined || parsed === undefined) return undefined
  const handler = await listing.fast()
  const options = handler.options(parsed)
  if (options === undefined) return undefined
  return handler.run(options).pipe(
    Effect.provideService(CliIo, io),
    Effect.provideService(Console.Console, consoleOf(io)),
    Effect.exit,
    Effect.map((exit) => exitCodeOf(io, exit)),
  )
}

/** Runs `pivot` as a promise, as `Cli.run` does: without effect/cli when the arguments allow it (tests compare both). */
export const run = async (declared: Declared, argv: ReadonlyArray<string>, io: Io): Promise<number> => {
  const fast = await program(declared, argv, io)
  if (fast !== undefined) return Effect.runPromise(fast)
  return (await import("./Cli.ts")).run(argv, io)
}

/** Runs `pivot` in this process as `RunMain.ts` does; the process exits with the command's exit code. */
export const runMain = async (declared: Declared, argv: ReadonlyArray<string>): Promise<void> => {
  const fast = await program(declared, argv, processIo())
  if (fast === undefined) return (await import("./RunMain.ts")).runMain(argv)
  NodeRuntime.runMain(
    Effect.flatMap(fast, (code) =>
      Effect.sync(() => {
        process.exitCode = code
      }),
    ),
  )
}
