/**
 * A persistent append-only sequence: O(1) append and index with the locality of a plain array. Versions share one
 * buffer; a version sees only its first `length` items, which never change. Appending to an older version (a branch)
 * copies its prefix, so only branching pays O(n) — a fold that extends its newest state never does.
 */

/** An immutable sequence of values. */
export interface Seq<A> {
  readonly length: number
  /** Shared by versions; items at `length` and beyond belong to newer versions. */
  readonly buffer: Array<A>
}

/** The empty sequence. */
export const empty = <A>(): Seq<A> => ({ length: 0, buffer: [] })

/** A sequence of the given values. */
export const fromIterable = <A>(values: Iterable<A>): Seq<A> => {
  const buffer = Array.from(values)
  return { length: buffer.length, buffer }
}

/** The sequence with one more value at the end. */
export const append = <A>(seq: Seq<A>, value: A): Seq<A> => {
  const buffer = seq.buffer.length === seq.length ? seq.buffer : seq.buffer.slice(0, seq.length)
  buffer.push(value)
  return { length: seq.length + 1, buffer }
}

/** The value at an index, if in range. */
export const get = <A>(seq: Seq<A>, index: number): A | undefined =>
  index >= 0 && index < seq.length ? seq.buffer[index] : undefined

/** The values as an array (a copy). */
export const toArray = <A>(seq: Seq<A>): Array<A> => seq.buffer.slice(0, seq.length)
