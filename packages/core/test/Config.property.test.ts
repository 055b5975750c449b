// `Config.surelyValid` (the hand check `ContextManager.layer` runs on its `config` option before any schema parser,
// ADR 0055) against its reference, the decoder of `Config.CompactionConfig`: whenever the hand check says yes, the
// schema decodes the value; on every valid config written as an object literal or JSON it says yes. Generated configs
// reach every key, present and absent, the bounds of each range (value − 1, value, value + 1), wrong types, extra keys
// and objects that are not plain.
import { Config } from "@pivot/core"
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "./support/runs.ts"

const decode = Schema.decodeUnknownExit(Config.CompactionConfig)
const schemaAccepts = (value: unknown) => decode(value)._tag === "Success"

const nonNegativeInt = fc.oneof(fc.nat(), fc.constantFrom(0, Number.MAX_SAFE_INTEGER))
const ratio = (low: number) => fc.oneof(fc.double({ min: low, max: 1, noNaN: true }), fc.constantFrom(low, 1))
const valid = fc.record(
  {
    auto: fc.boolean(),
    prune: fc.boolean(),
    reserved: nonNegativeInt,
    tail_turns: nonNegativeInt,
    preserve_recent_tokens: nonNegativeInt,
    output_token_max: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    threshold: ratio(Number.MIN_VALUE),
    opencode: fc.constantFrom("1.17", "1.18"),
    pin_first_message: fc.boolean(),
    pin_share: ratio(0),
  },
  { requiredKeys: [], noNullPrototype: true },
)
const KEYS = [
  "auto",
  "prune",
  "reserved",
  "tail_turns",
  "preserve_recent_tokens",
  "output_token_max",
  "threshold",
].concat(["opencode", "pin_first_message", "pin_share", "extra"])
/** Values around every bound and of every type: -1, -0.5, 0, 0.5, 1, 1.5, 2^53, NaN, ±Infinity, strings, null… */
const anyValue = fc.oneof(
  fc.constantFrom(-1, -0.5, -0, 0, 0.5, 1, 1.5, 2, 2 ** 53, Number.MIN_VALUE, Number.NaN, Infinity, -Infinity),
  fc.constantFrom("1.17", "1.18", "1.19", "", "true", true, false, null, undefined, [], {}),
  fc.double(),
  fc.integer(),
)
const broken = fc.tuple(valid, fc.constantFrom(...KEYS), anyValue).map(([config, key, value]) => ({
  ...config,
  [key]: value,
}))

describe("Config.surelyValid", () => {
  it("property: on every valid config, as written and as JSON keeps it, it says yes, and the schema decodes it", () => {
    fc.assert(
      fc.property(valid, (config) => {
        for (const value of [config, JSON.parse(JSON.stringify(config))]) {
          expect(Config.surelyValid(value)).toBe(true)
          expect(schemaAccepts(value)).toBe(true)
        }
      }),
      runs(500),
    )
  })

  it("property: on a config with one key set to any value, whenever it says yes the schema decodes it", () => {
    const cases = runs(2000)
    let refused = 0
    fc.assert(
      fc.property(broken, (config) => {
        if (Config.surelyValid(config)) expect(schemaAccepts(config)).toBe(true)
        else refused++
        // The schema refuses it: the hand check never says yes there.
        if (!schemaAccepts(config)) expect(Config.surelyValid(config)).toBe(false)
      }),
      cases,
    )
    expect(refused).toBeGreaterThan(cases.numRuns / 10)
  })

  it("given each range's bounds, then it answers as the schema at value − 1, value and value + 1", () => {
    const at = (key: string, values: ReadonlyArray<unknown>) =>
      values.map((value) => ({
        value,
        hand: Config.surelyValid({ [key]: value }),
        schema: schemaAccepts({ [key]: value }),
      }))
    const cases = [
      ...at("reserved", [-1, 0, 1]),
      ...at("output_token_max", [0, 1, 2]),
      ...at("threshold", [0, 1, 2, 0.5]),
      ...at("pin_share", [-1, 0, 1, 2]),
      ...at("tail_turns", [0.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1]),
      ...at("opencode", ["1.17", "1.18", "1.16"]),
    ]
    for (const c of cases) expect(c.hand).toBe(c.schema)
  })

  it("given what is not a plain object of the schema's keys, then it leaves it to the schema", () => {
    const hidden = Object.defineProperty({}, "auto", { value: 5, enumerable: false })
    for (const value of [undefined, null, 1, "x", [], Object.create(null), { auto: undefined }, { extra: 1 }, hidden])
      expect(Config.surelyValid(value)).toBe(false)
    // An extra key the schema ignores: valid, though the hand check leaves it to the schema.
    expect(schemaAccepts({ extra: 1 })).toBe(true)
    expect(schemaAccepts(hidden)).toBe(false)
  })
})
