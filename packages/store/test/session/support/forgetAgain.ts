/**
 * A repeated forget, at `SessionLog.forget`'s level, on any store: forgetting a session (and its fork) that was
 * forgotten before, with nothing recorded since that holds text, records nothing and says `alreadyForgotten`; text
 * recorded since (in the session or in its fork) is erased and marked again. Shared by the memory and SQLite files
 * (`ForgetAgain.int.test.ts`) and PostgreSQL (`Forget.postgres.slow.test.ts`).
 */
import { Events, Ids } from "@pivot/core"
import { Effect, type Layer } from "effect"
import { expect } from "vitest"
import { EventStore, type ReadError, SessionLog } from "../../../src/index.ts"
import { appendSealed } from "./forgetCaches.ts"

const user = (n: number, text: string): Events.Event => ({
  _tag: "UserMessageAdded",
  at: n,
  message: {
    role: "user",
    id: Ids.unsafe.message(`msg_u${n}`),
    createdAt: n,
    parts: [{ type: "text", id: Ids.unsafe.part(`prt_u${n}`), text }],
  },
})

/** The types of a session's events, in order. */
const types = (sessionId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    return (yield* store.read(Events.streamName(sessionId))).map((e) => e.type)
  })

/** Runs the scenario on a fresh store (`parent` and its fork `${parent}_fork` must be new to it). */
export const forgetAgain = (layer: Layer.Layer<EventStore, ReadError>, parent: string) => {
  const fork = `${parent}_fork`
  return Effect.runPromise(
    Effect.gen(function* () {
      const started = (id: string): Events.Event => ({
        _tag: "SessionStarted",
        sessionId: Ids.unsafe.session(id),
        at: 0,
      })
      yield* appendSealed(parent, [started(parent), user(1, "the first secret")])
      yield* appendSealed(fork, [
        started(fork),
        user(1, "the first secret"),
        { _tag: "SessionForked", at: 2, parent: Ids.unsafe.session(parent), parentVersion: 2 },
      ])

      const first = yield* SessionLog.forget(parent)
      expect(first).toMatchObject({
        alreadyForgotten: false,
        keyDeleted: true,
        forks: [fork],
        forksAlreadyForgotten: [],
      })
      const marked = { parent: yield* types(parent), fork: yield* types(fork) }
      expect(marked.parent.at(-1)).toBe(SessionLog.FORGOTTEN)
      expect(marked.fork.at(-1)).toBe(SessionLog.FORGOTTEN)

      // Again, and again after an event that holds no text: nothing recorded, the same answer.
      const again = yield* SessionLog.forget(parent)
      expect(again).toEqual({
        keyDeleted: false,
        logCleared: true,
        alreadyForgotten: true,
        forks: [fork],
        forksAlreadyForgotten: [fork],
      })
      yield* appendSealed(parent, [
        {
          _tag: "PartCompacted",
          at: 3,
          messageId: Ids.unsafe.message("msg_u1"),
          partId: Ids.unsafe.part("prt_u1"),
          tokens: 5,
        },
      ])
      expect(yield* SessionLog.forget(parent)).toEqual(again)
      expect(yield* types(parent)).toEqual([...marked.parent, "PartCompacted"])
      expect(yield* types(fork)).toEqual(marked.fork)

      // New text in the fork: the fork is forgotten again (its new text erased), the parent is left as it is.
      yield* appendSealed(fork, [user(4, "a second secret")])
      expect(yield* SessionLog.forget(parent)).toMatchObject({ alreadyForgotten: true, forksAlreadyForgotten: [] })
      expect(yield* types(fork)).toEqual([...marked.fork, "UserMessageAdded", SessionLog.FORGOTTEN])
      expect(JSON.stringify(yield* SessionLog.read(fork))).not.toContain("a second secret")

      // New text in the parent: erased and marked.
      yield* appendSealed(parent, [user(5, "a third secret")])
      const third = yield* SessionLog.forget(parent)
      expect(third).toMatchObject({ alreadyForgotten: false, keyDeleted: true, forksAlreadyForgotten: [fork] })
      expect((yield* types(parent)).filter((t) => t === SessionLog.FORGOTTEN)).toHaveLength(2)
      expect(JSON.stringify(yield* SessionLog.read(parent))).not.toContain("a third secret")
    }).pipe(Effect.provide(layer)),
  )
}
