import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import { type ExpectedVersion, expectedVersionMatches, type NewEvent, serializeBatch } from "../src/index.ts"

const expectedVersion: fc.Arbitrary<ExpectedVersion> = fc.oneof(
  fc.constantFrom<ExpectedVersion>("any", "no-stream", "stream-exists"),
  fc.nat({ max: 50 }),
)

describe("expectedVersionMatches", () => {
  it("property: any always matches, no-stream iff 0, stream-exists iff > 0, an exact n iff n = actual", () => {
    fc.assert(
      fc.property(expectedVersion, fc.nat({ max: 50 }), (expected, actual) => {
        const want =
          expected === "any"
            ? true
            : expected === "no-stream"
              ? actual === 0
              : expected === "stream-exists"
                ? actual > 0
                : expected === actual
        expect(expectedVersionMatches(expected, actual)).toBe(want)
      }),
      runs(1000),
    )
  })

  it("exact 0 and no-stream agree on every version", () => {
    for (let actual = 0; actual < 5; actual++) {
      expect(expectedVersionMatches(0, actual)).toBe(expectedVersionMatches("no-stream", actual))
    }
  })
})

describe("serializeBatch", () => {
  // JSON has no -0: it is stored as 0, the one rewrite JSON itself makes.
  const noNegativeZero = (value: unknown): unknown =>
    Object.is(value, -0)
      ? 0
      : Array.isArray(value)
        ? value.map(noNegativeZero)
        : typeof value === "object" && value !== null
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, noNegativeZero(v)]))
          : value

  it("property: every JSON value round-trips through the stored text unchanged (-0 reads back as 0)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.jsonValue(), { nil: undefined }), (data, metadata) => {
        const event: NewEvent =
          metadata === undefined
            ? { id: "e", type: "T", version: 1, data }
            : { id: "e", type: "T", version: 1, data, metadata }
        const result = serializeBatch([event])
        expect(Result.isSuccess(result)).toBe(true)
        const [stored] = Result.getOrThrow(result)
        expect(JSON.parse(stored!.data)).toEqual(noNegativeZero(data))
        expect(stored!.metadata === null ? undefined : JSON.parse(stored!.metadata)).toEqual(noNegativeZero(metadata))
      }),
      runs(1000),
    )
  })

  it("property: a non-JSON value anywhere in data is rejected with MalformedEvent pointing at it", () => {
    const poison = fc.constantFrom<unknown>(
      undefined,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      () => 1,
      1n,
      new Date(0),
      new Map(),
      Symbol("s"),
    )
    const key = fc.string({ minLength: 1, maxLength: 5 }).filter((k) => /^[a-z]+$/.test(k))
    // A path of object keys and array indexes leading to the poison value.
    const path = fc.array(fc.oneof(key, fc.nat({ max: 3 })), { maxLength: 4 })
    fc.assert(
      fc.property(path, poison, (steps, bad) => {
        let data: unknown = bad
        let expected = ""
        for (const step of [...steps].reverse()) {
          if (typeof step === "number") {
            const array: Array<unknown> = Array.from({ length: step }, () => 0)
            array.push(data)
            data = array
          } else data = { [step]: data }
        }
        for (const step of steps) expected += typeof step === "number" ? `[${step}]` : `.${step}`
        const result = serializeBatch([
          { id: "ok", type: "T", version: 1, data: 1 },
          { id: "e", type: "T", version: 1, data },
        ])
        expect(Result.isFailure(result) && result.failure).toMatchObject({
          _tag: "MalformedEvent",
          path: `events[1].data${expected}`,
        })
      }),
      runs(1000),
    )
  })

  it("property: with fields, the stored text is JSON.stringify's, and each object-valued field's text is its own", () => {
    const keyed = fc.dictionary(
      fc.oneof(fc.string(), fc.constantFrom("0", "10", "__proto__", "toJSON", 'a"b', "\u2028")),
      fc.jsonValue(),
    )
    fc.assert(
      fc.property(fc.oneof(keyed, fc.jsonValue()), (data) => {
        const fields = new Map<object, string>()
        const result = serializeBatch([{ id: "e", type: "T", version: 1, data }], fields)
        expect(Result.isSuccess(result)).toBe(true)
        const [stored] = Result.getOrThrow(result)
        expect(stored!.data).toBe(JSON.stringify(data))
        const objects =
          typeof data === "object" && data !== null && !Array.isArray(data)
            ? Object.values(data).filter((v): v is object => typeof v === "object" && v !== null)
            : []
        expect(fields.size).toBe(new Set(objects).size)
        for (const value of objects) expect(fields.get(value)).toBe(JSON.stringify(value))
      }),
      runs(1000),
    )
  })

  it("rejects a circular structure instead of overflowing", () => {
    const data: Record<string, unknown> = { a: 1 }
    data.self = data
    const result = serializeBatch([{ id: "e", type: "T", version: 1, data }])
    expect(Result.isFailure(result) && result.failure).toMatchObject({
      _tag: "MalformedEvent",
      path: "events[0].data.self",
    })
  })

  it("accepts a value nested deeper than the fast check goes, and still finds a cycle that deep", () => {
    let deep: unknown = "leaf"
    for (let i = 0; i < 500; i++) deep = i % 2 === 0 ? [deep] : { d: deep }
    expect(Result.isSuccess(serializeBatch([{ id: "e", type: "T", version: 1, data: deep }]))).toBe(true)
    const bottom: Record<string, unknown> = {}
    let top: Record<string, unknown> = bottom
    for (let i = 0; i < 100; i++) top = { d: top }
    bottom.back = top
    const result = serializeBatch([{ id: "e", type: "T", version: 1, data: top }])
    expect(Result.isFailure(result) && result.failure).toMatchObject({
      _tag: "MalformedEvent",
      message: "circular reference",
    })
    // A bad value below the fast check's depth is named as anywhere else.
    let bad: unknown = Number.NaN
    for (let i = 0; i < 80; i++) bad = [bad]
    const failed = serializeBatch([{ id: "e", type: "T", version: 1, data: bad }])
    expect(Result.isFailure(failed) && failed.failure).toMatchObject({
      path: `events[0].data${"[0]".repeat(80)}`,
    })
  })

  it("accepts a shared (non-circular) object referenced twice", () => {
    const shared = { x: 1 }
    const result = serializeBatch([{ id: "e", type: "T", version: 1, data: { a: shared, b: shared } }])
    expect(Result.isSuccess(result)).toBe(true)
  })

  it("names keys that are not identifiers with brackets", () => {
    const result = serializeBatch([{ id: "e", type: "T", version: 1, data: { "a b": { "0x": undefined } } }])
    expect(Result.isFailure(result) && result.failure).toMatchObject({ path: 'events[0].data["a b"]["0x"]' })
  })
})
