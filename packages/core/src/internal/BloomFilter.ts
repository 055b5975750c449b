/**
 * A scalable Bloom filter of strings: "certainly not added" or "maybe added" (under 1% false positives), in about
 * 1.75 bytes per item. It grows by adding segments twice the size of the last, so the items added decide its shape:
 * adding the same items in the same order gives the same filter. Immutable: `add` answers a new filter.
 */

/** One segment: a bit array sized for `capacity` items. */
interface Segment {
  readonly bits: Uint32Array
  readonly capacity: number
  readonly count: number
}

/** A filter: its segments, the newest last. */
export interface BloomFilter {
  readonly segments: ReadonlyArray<Segment>
  /** Items added (duplicates counted). */
  readonly count: number
}

const FIRST_CAPACITY = 1024
const BITS_PER_ITEM = 14
const HASHES = 10

/** The empty filter. */
export const empty: BloomFilter = { segments: [], count: 0 }

const segment = (capacity: number): Segment => ({
  bits: new Uint32Array(Math.ceil((capacity * BITS_PER_ITEM) / 32)),
  capacity,
  count: 0,
})

// Two independent 32-bit hashes (FNV-1a and a multiplicative variant), combined as h1 + i·h2 (Kirsch–Mitzenmacher).
const hashes = (value: string): readonly [number, number] => {
  let a = 0x811c9dc5
  let b = 0x9e3779b1
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x85ebca6b) ^ (b >>> 13)
  }
  return [a >>> 0, (b >>> 0) | 1]
}

const has = (s: Segment, h1: number, h2: number): boolean => {
  const size = s.bits.length * 32
  for (let i = 0; i < HASHES; i++) {
    const bit = (h1 + Math.imul(i, h2)) >>> 0
    const at = bit % size
    if ((s.bits[at >>> 5]! & (1 << (at & 31))) === 0) return false
  }
  return true
}

const set = (s: Segment, h1: number, h2: number): void => {
  const size = s.bits.length * 32
  for (let i = 0; i < HASHES; i++) {
    const at = ((h1 + Math.imul(i, h2)) >>> 0) % size
    s.bits[at >>> 5]! |= 1 << (at & 31)
  }
}

/** Whether the value may have been added (false: it certainly was not). */
export const mightContain = (filter: BloomFilter, value: string): boolean => {
  if (filter.segments.length === 0) return false
  const [h1, h2] = hashes(value)
  return filter.segments.some((s) => has(s, h1, h2))
}

/** A new filter with the values added; this one is unchanged. */
export const add = (filter: BloomFilter, values: Iterable<string>): BloomFilter => {
  const segments = filter.segments.map((s) => ({ ...s }))
  // The newest segment is copied before writing to it; full ones are never written again.
  let last: Segment | undefined = segments[segments.length - 1]
  if (last !== undefined) segments[segments.length - 1] = last = { ...last, bits: last.bits.slice() }
  let count = filter.count
  for (const value of values) {
    if (last === undefined || last.count >= last.capacity) {
      last = segment(last === undefined ? FIRST_CAPACITY : last.capacity * 2)
      segments.push(last)
    }
    const [h1, h2] = hashes(value)
    set(last, h1, h2)
    last = { ...last, count: last.count + 1 }
    segments[segments.length - 1] = last
    count++
  }
  return { segments, count }
}

/** The filter as JSON-safe data. */
export interface Encoded {
  readonly count: number
  readonly segments: ReadonlyArray<{ readonly capacity: number; readonly count: number; readonly bits: string }>
}

const toBase64 = (words: Uint32Array): string => {
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength)
  let binary = ""
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

const fromBase64 = (text: string, capacity: number): Uint32Array => {
  const binary = atob(text)
  const words = new Uint32Array(Math.ceil((capacity * BITS_PER_ITEM) / 32))
  if (binary.length !== words.byteLength)
    throw new Error(`bloom segment of ${binary.length} bytes for ${capacity} items`)
  const bytes = new Uint8Array(words.buffer)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return words
}

/** Encodes a filter. */
export const encode = (filter: BloomFilter): Encoded => ({
  count: filter.count,
  segments: filter.segments.map((s) => ({ capacity: s.capacity, count: s.count, bits: toBase64(s.bits) })),
})

/** Decodes a filter; throws on data that is not an encoded filter. */
export const decode = (encoded: Encoded): BloomFilter => ({
  count: encoded.count,
  segments: encoded.segments.map((s) => ({
    capacity: s.capacity,
    count: s.count,
    bits: fromBase64(s.bits, s.capacity),
  })),
})
