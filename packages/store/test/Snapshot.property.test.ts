/**
 * The snapshot checksum (ADR 0059): the fast checksum against an independent model of it (BigInt arithmetic, the
 * published FNV-1a vectors), every single code unit changed detected, the SHA-256 of earlier versions still checked.
 */
import { createHash } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { StoredSnapshot } from "../src/index.ts"
import { Snapshot } from "../src/index.ts"

const RUNS = { numRuns: process.env.PIVOT_TEST_LANE === "fast" ? 100 : 1000 }
const M32 = (1n << 32n) - 1n

/** One FNV-1a lane over UTF-16 code units, in BigInt: `(h ^ unit) · prime mod 2³²`. */
const lane = (data: string, seed: bigint, prime: bigint): bigint => {
  let h = seed
  for (const unit of Array.from({ length: data.length }, (_, i) => BigInt(data.charCodeAt(i))))
    h = ((h ^ unit) * prime) & M32
  return h
}
/** Murmur3's 32-bit finaliser, in BigInt. */
const fmix = (h: bigint): bigint => {
  h = ((h ^ (h >> 16n)) * 0x85ebca6bn) & M32
  h = ((h ^ (h >> 13n)) * 0xc2b2ae35n) & M32
  return h ^ (h >> 16n)
}
const model = (data: string): string => {
  const n = BigInt(data.length)
  const a = fmix(lane(data, 0x811c9dc5n, 0x01000193n) ^ n)
  const b = fmix(lane(data, 0x9e3779b9n, 0x5bd1e995n) ^ ((n * 0x27d4eb2fn) & M32))
  return `fnv1a-2x32:${a.toString(16).padStart(8, "0")}${b.toString(16).padStart(8, "0")}`
}

const stored = (data: string, checksum: string): StoredSnapshot => ({
  stream: "s",
  version: 1,
  format: "f",
  data,
  checksum,
  recordedAt: 0,
})
const sha256 = (data: string) => createHash("sha256").update(data).digest("hex")
/** Strings of any code units, lone surrogates included (JSON keeps them escaped, but the checksum takes any string). */
const text = fc.string({ unit: "binary", maxLength: 300 })

describe("the snapshot checksum", () => {
  it("the model's first lane is FNV-1a: the published 32-bit vectors", () => {
    expect(lane("", 0x811c9dc5n, 0x01000193n)).toBe(0x811c9dc5n)
    expect(lane("a", 0x811c9dc5n, 0x01000193n)).toBe(0xe40c292cn)
    expect(lane("foobar", 0x811c9dc5n, 0x01000193n)).toBe(0xbf9cf968n)
  })

  it("is the model's value for any string, and what `checksum` writes", () => {
    fc.assert(
      fc.property(text, (data) => {
        expect(Snapshot.fast(data)).toBe(model(data))
        expect(Snapshot.checksum(data)).toBe(model(data))
        expect(Snapshot.intact(stored(data, Snapshot.checksum(data)))).toBe(true)
      }),
      RUNS,
    )
  })

  it("given one code unit of the data changed, then the snapshot is not intact (never a collision)", () => {
    fc.assert(
      fc.property(
        text.filter((s) => s.length > 0),
        fc.nat(),
        fc.integer({ min: 1, max: 0xffff }),
        (data, at, delta) => {
          const i = at % data.length
          const changed =
            data.slice(0, i) + String.fromCharCode((data.charCodeAt(i) + delta) & 0xffff) + data.slice(i + 1)
          expect(changed).not.toBe(data)
          expect(Snapshot.intact(stored(changed, Snapshot.checksum(data)))).toBe(false)
        },
      ),
      RUNS,
    )
  })

  it("given the data cut short or grown, then it is not intact", () => {
    fc.assert(
      fc.property(
        text,
        text.filter((s) => s.length > 0),
        (data, more) => {
          const checksum = Snapshot.checksum(data + more)
          expect(Snapshot.intact(stored(data, checksum))).toBe(false)
          expect(Snapshot.intact(stored(data + more + more, checksum))).toBe(false)
        },
      ),
      RUNS,
    )
  })

  it("given a checksum written by an earlier version (SHA-256, 64 hex digits), then it is checked as one", () => {
    fc.assert(
      fc.property(text, (data) => {
        expect(Snapshot.intact(stored(data, sha256(data)))).toBe(true)
        expect(Snapshot.intact(stored(`${data} `, sha256(data)))).toBe(false)
        expect(Snapshot.sha256(data)).toBe(sha256(data))
      }),
      RUNS,
    )
  })

  it("given a checksum of neither form, or the right digits under another name, then it is not intact", () => {
    const data = '{"a":1}'
    const digits = Snapshot.checksum(data).slice("fnv1a-2x32:".length)
    for (const checksum of [
      "",
      digits,
      `fnv1a-2x32:${digits.toUpperCase()}`,
      sha256(data).toUpperCase(),
      `${sha256(data)}0`,
    ])
      expect(Snapshot.intact(stored(data, checksum))).toBe(false)
  })
})
