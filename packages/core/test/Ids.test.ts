/** Ids: prefixed, schema-checked, and sortable in creation order, from Clock and Random (never Date.now). */
import { describe, expect, it } from "@effect/vitest"
import { Ids } from "@pivot/core"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { runs } from "./support/runs.ts"

const take = (n: number) =>
  Effect.gen(function* () {
    const ids = yield* Ids.Ids
    const made: Array<string> = []
    for (let i = 0; i < n; i++) made.push(yield* ids.message)
    return made
  })

describe("Ids", () => {
  it.effect("ids made in the same millisecond are unique and ascending", () =>
    Effect.gen(function* () {
      const made = yield* take(1000)
      expect(new Set(made).size).toBe(1000)
      expect([...made].sort()).toEqual(made)
      for (const id of made) expect(Schema.is(Ids.MessageId)(id)).toBe(true)
    }).pipe(Effect.provide(Ids.Ids.layer)),
  )

  it.effect("ids made later sort after earlier ones, whatever the random tail", () =>
    Effect.gen(function* () {
      const before = yield* take(5)
      yield* TestClock.adjust("1 second")
      const after = yield* take(5)
      expect(before.every((b) => after.every((a) => a > b))).toBe(true)
    }).pipe(Effect.provide(Ids.Ids.layer)),
  )

  it.effect("the sequential layer is deterministic and zero-padded", () =>
    Effect.gen(function* () {
      const ids = yield* Ids.Ids
      expect([yield* ids.session, yield* ids.message, yield* ids.part]).toEqual([
        "ses_00000001",
        "msg_00000002",
        "prt_00000003",
      ])
    }).pipe(Effect.provide(Ids.Ids.layerSequential)),
  )

  it("a part id derived from its message's is a valid, stable id, distinct per index and per message, sorted by index", () => {
    const message = Ids.unsafe.message("msg_0190abc123XYZ")
    const other = Ids.unsafe.message("msg_0190abc123XYz")
    const parts = [0, 1, 9, 10, 11, 999, 1000, 99_999, 100_000, 999_999].map((i) => Ids.partOf(message, i))
    for (const id of parts) expect(Schema.is(Ids.PartId)(id)).toBe(true)
    expect(Ids.partOf(message, 3)).toBe(Ids.partOf(message, 3))
    expect(new Set(parts).size).toBe(parts.length)
    expect([...parts].sort()).toEqual(parts)
    expect(Ids.partOf(other, 0)).not.toBe(Ids.partOf(message, 0))
  })

  it("the schemas reject a wrong prefix", () => {
    expect(Schema.is(Ids.MessageId)("prt_123")).toBe(false)
    expect(Schema.is(Ids.PartId)("prt_123")).toBe(true)
  })
})

describe("Ids.sessionIdOf (session names → session ids)", () => {
  const valid = Schema.is(Ids.SessionId)

  it("a session id is used as is; a name of safe characters gets the ses_ prefix", () => {
    expect(Ids.sessionIdOf("ses_01HZX")).toBe("ses_01HZX")
    expect(Ids.sessionIdOf("fix-the-test")).toBe("ses_fix-the-test")
    expect(Ids.sessionIdOf("a")).toBe("ses_a")
  })

  it("any other name maps to its safe letters and a hash: valid, stable, distinct", () => {
    const a = Ids.sessionIdOf("Fix the test!")
    expect(a).toMatch(/^ses_Fix_the_test-[0-9a-f]{16}$/)
    expect(Ids.sessionIdOf("Fix the test!")).toBe(a)
    expect(Ids.sessionIdOf("Fix the test?")).not.toBe(a)
    expect(Ids.sessionIdOf("🦊")).toMatch(/^ses_[0-9a-f]{16}$/)
    expect(Ids.sessionIdOf("chat/42")).toMatch(/^ses_chat_42-[0-9a-f]{16}$/)
  })

  it("a name of MAX_SESSION_NAME characters maps; one character more, blank, empty or control characters do not", () => {
    expect(Ids.sessionIdOf("x".repeat(Ids.MAX_SESSION_NAME - 1))).toBeDefined()
    expect(Ids.sessionIdOf("x".repeat(Ids.MAX_SESSION_NAME))).toBeDefined()
    expect(Ids.sessionIdOf("x".repeat(Ids.MAX_SESSION_NAME + 1))).toBeUndefined()
    expect(Ids.sessionIdOf("")).toBeUndefined()
    expect(Ids.sessionIdOf("   ")).toBeUndefined()
    expect(Ids.sessionIdOf("a\nb")).toBeUndefined()
    expect(Ids.sessionIdOf("a\u0000")).toBeUndefined()
  })

  it("every mappable name gives a valid id, and two names share an id only when one is ses_<the other>", () =>
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40, unit: "grapheme" }),
        fc.string({ maxLength: 40, unit: "grapheme" }),
        (a, b) => {
          const ia = Ids.sessionIdOf(a)
          const ib = Ids.sessionIdOf(b)
          for (const [name, id] of [
            [a, ia],
            [b, ib],
          ] as const) {
            // The reference: which names are refused, written independently of the implementation.
            const refused = name.trim() === "" || [...name].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)
            expect(id === undefined).toBe(refused)
            if (id !== undefined) expect(valid(id)).toBe(true)
          }
          if (ia !== undefined && ia === ib && a !== b) expect([`ses_${a}`, `ses_${b}`]).toContain(ia)
        },
      ),
      runs(500),
    ))
})
