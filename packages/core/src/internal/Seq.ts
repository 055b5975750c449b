/**
 * A persistent append-only sequence: O(log₃₂ n) append and index, so folds that keep one stay O(event), not
 * O(history). (effect's Chunk copies on append from an old version, which grows with the history.)
 */
import { HashMap, Option } from "effect"

/** An immutable sequence of values. */
export interface Seq<A> {
  readonly length: number
  readonly items: HashMap.HashMap<number, A>
}

/** The empty sequence. */
export const empty = <A>(): Seq<A> => ({ length: 0, items: HashMap.empty() })

/** A sequence of the given values. */
export const fromIterable = <A>(values: Iterable<A>): Seq<A> => {
  let seq = empty<A>()
  for (const value of values) seq = append(seq, value)
  return seq
}

/** The sequence with one more value at the end. */
export const append = <A>(seq: Seq<A>, value: A): Seq<A> => ({
  length: seq.length + 1,
  items: HashMap.set(seq.items, seq.length, value),
})

/** The value at an index, if in range. */
export const get = <A>(seq: Seq<A>, index: number): A | undefined =>
  index >= 0 && index < seq.length ? Option.getOrUndefined(HashMap.get(seq.items, index)) : undefined

/** The values from first to last. */
export function* values<A>(seq: Seq<A>, from = 0): Generator<A> {
  for (let i = from; i < seq.length; i++) yield get(seq, i) as A
}

/** The values from last to first. */
export function* reversed<A>(seq: Seq<A>): Generator<A> {
  for (let i = seq.length - 1; i >= 0; i--) yield get(seq, i) as A
}

/** The values as an array. */
export const toArray = <A>(seq: Seq<A>): Array<A> => Array.from(values(seq))
