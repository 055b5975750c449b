/** Ids: prefixed, schema-checked, and sortable in creation order, from Clock and Random (never Date.now). */
import { describe, expect, it } from "@effect/vitest"
import { Ids } from "@pivot/core"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"

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

  it("the schemas reject a wrong prefix", () => {
    expect(Schema.is(Ids.MessageId)("prt_123")).toBe(false)
    expect(Schema.is(Ids.PartId)("prt_123")).toBe(true)
  })
})
