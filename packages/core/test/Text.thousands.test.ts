/**
 * `Text.thousands` writes a number as `Math.round(n).toLocaleString("en-US")` does, without ICU. The reference model
 * is ICU itself (`toLocaleString`): the boundaries of each group of three digits, the signs, the rounding of halves,
 * and generated numbers from every magnitude a safe integer or a double can have.
 */
import { Text } from "@pivot/core"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RUNS } from "./support/runs.ts"

const reference = (n: number): string => Math.round(n).toLocaleString("en-US")

describe("Text.thousands", () => {
  it("given the edges of each digit group, then the commas fall where ICU puts them", () => {
    const cases: ReadonlyArray<readonly [number, string]> = [
      [0, "0"],
      [999, "999"],
      [1000, "1,000"],
      [1001, "1,001"],
      [99_999, "99,999"],
      [100_000, "100,000"],
      [999_999, "999,999"],
      [1_000_000, "1,000,000"],
      [1_000_001, "1,000,001"],
      [-999, "-999"],
      [-1000, "-1,000"],
      [-1001, "-1,001"],
      [Number.MAX_SAFE_INTEGER, "9,007,199,254,740,991"],
      [1234.5, "1,235"],
      [1234.4999, "1,234"],
      [-1234.5, "-1,234"],
      [-1234.51, "-1,235"],
    ]
    for (const [n, text] of cases) {
      expect(Text.thousands(n)).toBe(text)
      expect(reference(n)).toBe(text)
    }
  })

  it("given -0, a negative half, NaN, the infinities and numbers past 1e21, then it writes what ICU writes", () => {
    for (const n of [
      -0,
      -0.4,
      -0.5,
      Number.NaN,
      Infinity,
      -Infinity,
      1e21 - 65536,
      1e21,
      -1e21,
      1.5e300,
      -Number.MAX_VALUE,
    ])
      expect(Text.thousands(n)).toBe(reference(n))
  })

  it("equals Math.round(n).toLocaleString('en-US') for any integer and any double", () => {
    const magnitudes = fc
      .integer({ min: 0, max: 22 })
      .chain((digits) => fc.double({ min: -(10 ** digits), max: 10 ** digits, noNaN: false }))
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.maxSafeInteger(), magnitudes, fc.double()), (n) => {
        expect(Text.thousands(n)).toBe(reference(n))
      }),
      RUNS,
    )
  })
})
