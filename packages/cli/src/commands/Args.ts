/**
 * A command's options from arguments read in a plain form (`FastArgs.ts`), as effect/cli would hand them to its
 * handler, without effect/cli (ADR 0048). Each reader mirrors one flag declaration of `Flags.ts` and applies the same
 * rule (`parseCount`, `isPostgresUrl`); a value that effect/cli would refuse or that the reader does not expect — and
 * any flag or positional value the command's reading leaves unread — makes the whole reading `undefined`, and
 * effect/cli runs instead (its errors are its own). `fastArgs.test.ts` compares the result with effect/cli's options.
 */
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type { ParsedArgs } from "../FastArgs.ts"
import { isPostgresUrl, parseCount } from "./Source.ts"

/** Reads the flags and positional values of one plain argument list. */
export interface Reader {
  /** An optional string flag (`Flag.String(name).pipe(Flag.optional)`). */
  readonly string: (name: string) => Option.Option<string>
  /** An optional integer flag (`Flags.countFlag`). */
  readonly count: (name: string) => Option.Option<number>
  /** A choice with a default (`Flag.Literals(name, choices).pipe(Flag.withDefault(fallback))`). */
  readonly choice: <const C extends string>(name: string, choices: ReadonlyArray<C>, fallback: C) => C
  /** A boolean flag defaulting to false (`Flag.Boolean(name).pipe(Flag.withDefault(false))`). */
  readonly boolean: (name: string) => boolean
  /** The optional positional value at `index` (`Argument.String(…).pipe(Argument.optional)`). */
  readonly argument: (index: number) => Option.Option<string>
}

// Thrown inside a reading when only effect/cli can tell what the arguments mean.
const notPlain: unique symbol = Symbol("notPlain")

/**
 * The options `build` makes from `parsed`, or `undefined` when a value is one effect/cli would refuse or transform
 * otherwise, or when `build` leaves a given flag or positional value unread.
 */
export const read = <O>(parsed: ParsedArgs, build: (reader: Reader) => O): O | undefined => {
  const used = new Set<string>()
  let positional = 0
  const given = (name: string): string | true | undefined => {
    used.add(name)
    return Object.hasOwn(parsed.flags, name) ? parsed.flags[name] : undefined
  }
  const text = (name: string): string | undefined => {
    const value = given(name)
    if (value === true) throw notPlain
    return value
  }
  const reader: Reader = {
    string: (name) => Option.fromUndefinedOr(text(name)),
    count: (name) => {
      const value = text(name)
      if (value === undefined) return Option.none()
      const parsedCount = parseCount(name, value)
      if (Result.isFailure(parsedCount)) throw notPlain
      return Option.some(parsedCount.success)
    },
    choice: (name, choices, fallback) => {
      const value = text(name)
      if (value === undefined) return fallback
      const found = choices.find((choice) => choice === value)
      if (found === undefined) throw notPlain
      return found
    },
    boolean: (name) => {
      const value = given(name)
      if (value === undefined) return false
      if (value !== true) throw notPlain
      return true
    },
    argument: (index) => {
      positional = Math.max(positional, index + 1)
      return Option.fromUndefinedOr(parsed.arguments[index])
    },
  }
  try {
    const options = build(reader)
    const unread = Object.keys(parsed.flags).some((name) => !used.has(name)) || parsed.arguments.length > positional
    return unread ? undefined : options
  } catch (error) {
    if (error === notPlain) return undefined
    throw error
  }
}

/** The source flags (`Flags.sourceFlags`): `<export.json>`, `--db FILE` (never a PostgreSQL URL), `--session ID`. */
export const source = (reader: Reader) => {
  const db = reader.string("db")
  if (Option.isSome(db) && isPostgresUrl(db.value)) throw notPlain
  return { file: reader.argument(0), db, session: reader.string("session") }
}

/** `--limit`, `--tail`, `--from`, `--to` (`Flags.limitFlags`). */
export const limits = (reader: Reader) => ({
  limit: reader.count("limit"),
  tail: reader.count("tail"),
  from: reader.count("from"),
  to: reader.count("to"),
})
