/**
 * What `pivot` answers without loading `effect/cli`: its help (`--help`, `-h`, `help`, no command, and each command's
 * `--help`) and its version. These texts are effect/cli's own, made once at build time from the same compiled code
 * (`Precompute.ts`, run by scripts/bundle.mjs) and written beside the bundle's entry as `precomputed.json`; a run whose
 * arguments are exactly one of those answers prints it and exits, in the time Node takes to start (ADR 0037). Any
 * other arguments, or no such file (the sources, `tsc`'s dist/), run the command line as usual. This module imports
 * nothing but types: it is the whole of what `pivot --help` loads besides the bundle's entry.
 */
import * as fs from "node:fs"
import type { Declared } from "./FastArgs.ts"

/** What a run printed and its exit code. */
export interface Answer {
  readonly stdout: string
  readonly stderr: string
  readonly code: number
}

/** The precomputed answers: each argument list (its `keyOf`) names one of `answers`. */
export interface Table {
  readonly keys: Readonly<Record<string, number>>
  readonly answers: ReadonlyArray<Answer>
  /** The flags of each command whose handler runs without effect/cli, as effect/cli declares them (`FastArgs.ts`). */
  readonly commands?: Readonly<Record<string, Declared>> | undefined
}

/** The declared flags of `name` when it has a handler that runs without effect/cli. */
export const declared = (table: Table | undefined, name: string | undefined): Declared | undefined =>
  table?.commands !== undefined && name !== undefined && Object.hasOwn(table.commands, name)
    ? table.commands[name]
    : undefined

/** The key of an argument list in a `Table`: the exact arguments, in order. */
export const keyOf = (argv: ReadonlyArray<string>): string => JSON.stringify(argv)

/** The answer to exactly these arguments, if the table has one. */
export const answer = (table: Table | undefined, argv: ReadonlyArray<string>): Answer | undefined => {
  if (table === undefined) return undefined
  const key = keyOf(argv)
  return Object.hasOwn(table.keys, key) ? table.answers[table.keys[key]!] : undefined
}

/** The table in `file`, or undefined when there is none (a run from the sources) or it cannot be read. */
export const read = (file: URL): Table | undefined => {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Table
  } catch {
    return undefined
  }
}

/** Prints an answer as the command line would have, and sets the exit code. */
export const print = (found: Answer): void => {
  if (found.stdout !== "") process.stdout.write(found.stdout)
  if (found.stderr !== "") process.stderr.write(found.stderr)
  process.exitCode = found.code
}
