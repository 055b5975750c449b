/**
 * Issue 18 item 4: a command refused on a live state that dropped old messages is decided again on the whole log. When
 * another writer appends while the whole log is read, the decision must still be taken on fresh state, never the
 * stale refusal returned (a step whose parent is stored was rejected with `UnknownMessage`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Events, Ids, Retention } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"
import { layer, SESSION, services, step, used, users } from "./support/harness.ts"

const stream = Events.streamName(SESSION)

/** A memory store where, while armed, "another process" appends a user message just before each whole-log read. */
const interleaving = (armed: { count: number }) =>
  Layer.effect(
    EventStore,
    Effect.gen(function* () {
      const inner = yield* EventStore
      let n = 0
      return {
        ...inner,
        read: (s, options) =>
          Effect.gen(function* () {
            if (s === stream && options?.from === undefined && armed.count > 0) {
              armed.count--
              n++
              const version = yield* inner.streamVersion(s)
              const message = {
                role: "user" as const,
                id: Ids.unsafe.message(`msg_zz_other_${n}`),
                createdAt: 1,
                parts: [{ type: "text" as const, id: Ids.unsafe.part(`prt_zz_other_${n}`), text: "from elsewhere" }],
              }
              yield* Effect.orDie(
                inner.append(s, version, [
                  Sessions.encodeEvent(`evt_other_${n}`, { _tag: "UserMessageAdded", at: 1, message }),
                ]),
              )
            }
            return yield* inner.read(s, options)
          }),
      }
    }),
  ).pipe(Layer.provide(EventStore.layerMemory()))

describe("a refusal decided again on the whole log", () => {
  it.effect(
    "given a step whose parent the live state dropped, when another writer appends during the whole-log read, then the step is recorded, not refused",
    () => {
      const armed = { count: 0 }
      return Effect.gen(function* () {
        const { cm, sessions } = yield* services
        const [first] = yield* users("read the README")
        yield* step(1_000, "stop")
        yield* users("refactor src/store.ts")
        yield* step(90_000)
        yield* cm.prepare(SESSION) // the compaction: a pivot, after which the live state drops old messages
        yield* users("next request")
        yield* step(1_000, "stop")
        const before = yield* sessions.load(SESSION)
        expect(Retention.retiredCount(before.session)).toBeGreaterThan(0)
        expect(Retention.mayBeRetired(before.session, first!)).toBe(true)

        armed.count = 1
        const late = {
          role: "assistant" as const,
          id: Ids.unsafe.message("msg_zz_late_step"),
          parentId: first!,
          createdAt: 5,
          completedAt: 6,
          model: { providerId: "anthropic", modelId: "claude-test" },
          tokens: used(10),
          finish: "stop",
          parts: [{ type: "text" as const, id: Ids.unsafe.part("prt_zz_late_step"), text: "late answer" }],
        }
        const executed = yield* sessions.execute(SESSION, { _tag: "RecordAssistantStep", message: late })
        expect(armed.count).toBe(0) // the other writer did append during the read
        expect(executed.events.map((e) => e._tag)).toEqual(["AssistantStepRecorded"])
        const stored = yield* (yield* EventStore).read(stream)
        expect(stored.at(-2)?.id).toBe("evt_other_1")
        expect(stored.at(-1)?.type).toBe("AssistantStepRecorded")
        expect(executed.state.session.version).toBe(stored.length)
      }).pipe(Effect.provide(layer({ store: interleaving(armed) })))
    },
  )

  it.effect("given a parent that is in no version of the log, then the refusal stands (UnknownMessage)", () => {
    const armed = { count: 0 }
    return Effect.gen(function* () {
      const { cm, sessions } = yield* services
      yield* users("read the README")
      yield* step(1_000, "stop")
      yield* users("refactor src/store.ts")
      yield* step(90_000)
      yield* cm.prepare(SESSION)
      yield* users("next request")
      expect(Retention.retiredCount((yield* sessions.load(SESSION)).session)).toBeGreaterThan(0)
      armed.count = 1
      const orphan = {
        role: "assistant" as const,
        id: Ids.unsafe.message("msg_zz_orphan"),
        parentId: Ids.unsafe.message("msg_00_never_stored"),
        createdAt: 5,
        model: { providerId: "anthropic", modelId: "claude-test" },
        tokens: used(10),
        parts: [],
      }
      const refused = yield* Effect.flip(sessions.execute(SESSION, { _tag: "RecordAssistantStep", message: orphan }))
      expect(refused._tag).toBe("UnknownMessage")
      const stored = yield* (yield* EventStore).read(stream)
      expect(stored.some((e) => e.type === "AssistantStepRecorded" && e.id.includes("orphan"))).toBe(false)
    }).pipe(Effect.provide(layer({ store: interleaving(armed) })))
  })
})
