/**
 * Runs the `pivot` command line in this process (what `bin.ts` loads unless the arguments have a precomputed answer).
 * `NodeRuntime.runMain` interrupts the command on Ctrl-C / SIGTERM (closing the database cleanly).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { main, processIo } from "./Cli.ts"

/** Runs `pivot` with the arguments after the program name; the process exits with the command's exit code. */
export const runMain = (argv: ReadonlyArray<string>): void =>
  NodeRuntime.runMain(
    Effect.flatMap(main(argv, processIo()), (code) =>
      Effect.sync(() => {
        process.exitCode = code
      }),
    ),
  )
