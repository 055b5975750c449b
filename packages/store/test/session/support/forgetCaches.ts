/**
 * The scenario of issue 18 #1 at the store's level, on any SQL backend: a store layer A holds a session's folded read
 * models in memory (and maybe a snapshot of them); another layer forgets the session; A appends. Nothing A reads or
 * writes afterwards may hold the forgotten word.
 */
import { type Events, Ids } from "@pivot/core"
import { Effect, type Layer, ManagedRuntime } from "effect"
import { expect } from "vitest"
import { EventStore, type ReadError, ReadModels, SessionLog } from "../../../src/index.ts"

export const SECRET = "zebraquokka-forgotten-word"
const model = { providerId: "anthropic", modelId: "claude-test" }

const user = (n: number, text: string): Events.Event => ({
  _tag: "UserMessageAdded",
  at: n,
  message: {
    role: "user",
    id: Ids.unsafe.message(`msg_u${n}`),
    createdAt: n,
    model,
    parts: [{ type: "text", id: Ids.unsafe.part(`prt_u${n}`), text }],
  },
})

/** Appends sealed events at the session's head (as `encryptAtRest` records them). */
export const appendSealed = (sessionId: string, events: ReadonlyArray<Events.Event>) =>
  Effect.gen(function* () {
    const head = yield* SessionLog.version(sessionId)
    yield* SessionLog.append(
      sessionId,
      head,
      events.map((event, i) => ({ id: `evt_${sessionId}_${head + i + 1}`, event })),
      { seal: true },
    )
  })

/** Runs the scenario: `a` is writer A's layer, `forgetter` the layer the forget runs through. */
export const forgetBesideA = async (
  sessionId: string,
  a: Layer.Layer<ReadModels.ReadModels | EventStore, ReadError>,
  forgetter: Layer.Layer<EventStore, ReadError>,
) => {
  const runtime = ManagedRuntime.make(a)
  try {
    await runtime.runPromise(
      Effect.gen(function* () {
        const started: Events.Event = { _tag: "SessionStarted", sessionId: Ids.unsafe.session(sessionId), at: 0, model }
        yield* appendSealed(sessionId, [started, user(1, `the word is ${SECRET}`), user(2, "more")])
        const window = yield* (yield* ReadModels.ReadModels).window(sessionId)
        expect(JSON.stringify(window)).toContain(SECRET) // the control: A's copies hold it
      }),
    )
    await Effect.runPromise(SessionLog.forget(sessionId).pipe(Effect.provide(forgetter)))
    const after = await runtime.runPromise(
      Effect.gen(function* () {
        yield* appendSealed(sessionId, [user(3, "after the forget")])
        const readModels = yield* ReadModels.ReadModels
        return {
          tables: yield* readModels.tables(sessionId),
          window: yield* readModels.window(sessionId),
          recall: yield* readModels.recall(sessionId, SECRET, 10),
        }
      }),
    )
    expect(JSON.stringify(after)).not.toContain(SECRET)
    expect(after.window.map((m) => m.id)).toEqual(["msg_u1", "msg_u2", "msg_u3"])
    expect(JSON.stringify(after.window)).toContain(EventStore.ERASED)
  } finally {
    await runtime.dispose()
  }
}
