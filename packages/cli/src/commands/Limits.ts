/**
 * `--limit N`, `--tail N`, `--from K`, `--to K`: which rows of a long listing to print. `--from`/`--to` keep the rows
 * whose key (a message number, or a stream version, as each command says) lies in the range, both ends included;
 * then `--limit` keeps the first N of those or `--tail` the last N. The one home of that rule.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { UsageError } from "./Command.ts"
import { num } from "./Text.ts"

/** Which rows to keep; every field optional. */
export interface Limits {
  readonly limit?: number | undefined
  readonly tail?: number | undefined
  readonly from?: number | undefined
  readonly to?: number | undefined
}

/** The four flags as a command's handler gets them (`Flags.limitFlags`). */
export interface LimitOptions {
  readonly limit: Option.Option<number>
  readonly tail: Option.Option<number>
  readonly from: Option.Option<number>
  readonly to: Option.Option<number>
}

/** The limits given on the command line; `--limit` with `--tail`, or `--from` above `--to`, is wrong usage. */
export const parseLimits = (options: LimitOptions): Effect.Effect<Limits, UsageError> => {
  const limits: Limits = {
    limit: Option.getOrUndefined(options.limit),
    tail: Option.getOrUndefined(options.tail),
    from: Option.getOrUndefined(options.from),
    to: Option.getOrUndefined(options.to),
  }
  if (limits.limit !== undefined && limits.tail !== undefined)
    return Effect.fail(new UsageError({ message: "give --limit or --tail, not both" }))
  if (limits.from !== undefined && limits.to !== undefined && limits.from > limits.to)
    return Effect.fail(new UsageError({ message: `--from ${limits.from} is after --to ${limits.to}` }))
  return Effect.succeed(limits)
}

/** Whether any limit is set. */
export const isLimited = (limits: Limits): boolean =>
  limits.limit !== undefined || limits.tail !== undefined || limits.from !== undefined || limits.to !== undefined

/** The rows to print, in order: those with a key in range, then the first `limit` or last `tail` of them. */
export const select = <A>(rows: ReadonlyArray<A>, key: (row: A, index: number) => number, limits: Limits): Array<A> => {
  const inRange = rows.filter((row, i) => {
    const k = key(row, i)
    return (limits.from === undefined || k >= limits.from) && (limits.to === undefined || k <= limits.to)
  })
  if (limits.limit !== undefined) return inRange.slice(0, limits.limit)
  if (limits.tail !== undefined) return limits.tail === 0 ? [] : inRange.slice(-limits.tail)
  return inRange
}

/** A note for the rows left out, e.g. `(showing 20 of 20,000 messages: --limit/--tail/--from/--to)`; else undefined. */
export const omitted = (shown: number, total: number, what: string): string | undefined =>
  shown === total ? undefined : `  (showing ${num(shown)} of ${num(total)} ${what}; see --limit, --tail, --from, --to)`
