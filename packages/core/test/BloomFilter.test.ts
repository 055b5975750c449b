/** The Bloom filter behind bounded live state: never a false "no", few false "maybe"s, deterministic, encodable. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as BloomFilter from "../src/internal/BloomFilter.ts"

describe("BloomFilter", () => {
  it("never answers 'certainly not' for an added value, however the values were split into adds", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 3000 }), fc.nat(3000), (values, cut) => {
        const at = cut % (values.length + 1)
        const split = BloomFilter.add(BloomFilter.add(BloomFilter.empty, values.slice(0, at)), values.slice(at))
        const once = BloomFilter.add(BloomFilter.empty, values)
        for (const v of values) expect(BloomFilter.mightContain(split, v)).toBe(true)
        expect(BloomFilter.encode(split)).toEqual(BloomFilter.encode(once))
      }),
      { numRuns: 50 },
    )
  })

  it("keeps false positives under 1% as it grows, and leaves the filter it was given unchanged", () => {
    const ids = Array.from({ length: 50_000 }, (_, i) => `msg_${String(i).padStart(8, "0")}`)
    const filter = BloomFilter.add(BloomFilter.empty, ids)
    let positives = 0
    for (let i = 0; i < 50_000; i++) if (BloomFilter.mightContain(filter, `msg_x${i}`)) positives++
    expect(positives / 50_000).toBeLessThan(0.01)
    const before = BloomFilter.encode(filter)
    BloomFilter.add(filter, ["another"])
    expect(BloomFilter.encode(filter)).toEqual(before)
    expect(BloomFilter.mightContain(BloomFilter.empty, "msg_00000001")).toBe(false)
  })

  it("round-trips through its encoding and refuses a segment of the wrong size", () => {
    const filter = BloomFilter.add(BloomFilter.empty, ["a", "b", "c"])
    const encoded = BloomFilter.encode(filter)
    const decoded = BloomFilter.decode(JSON.parse(JSON.stringify(encoded)))
    expect(BloomFilter.encode(decoded)).toEqual(encoded)
    expect(["a", "b", "c"].every((v) => BloomFilter.mightContain(decoded, v))).toBe(true)
    const bad = { ...encoded, segments: [{ ...encoded.segments[0]!, bits: "AAAA" }] }
    expect(() => BloomFilter.decode(bad)).toThrow(/bloom segment/)
  })
})
