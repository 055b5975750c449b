// What the snapshot writer's tests share (ADR 0024): a store whose snapshot writes wait on a gate, a handler in a given
// scope, a restart, and the forget race run on any backend.
import { Ids } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, SessionLog, type StoredSnapshot } from "@pivot/store"
import { Deferred, Effect, Exit, Scope } from "effect"
import type { Store } from "./snapshots.ts"

/**
 * `inner` with snapshot writes that wait for `gate`: `entered` is completed by the first one, `written` lists the
 * versions that reached the store, each with whether `closed` was set by then.
 */
export const gatedOver = (inner: Store) =>
  Effect.gen(function* () {
    const gate = yield* Deferred.make<void>()
    const entered = yield* Deferred.make<void>()
    const written: Array<{ readonly version: number; readonly afterClose: boolean }> = []
    const closed = { value: false }
    const store: Store = {
      ...inner,
      writeSnapshot: (s, snapshot) =>
        Effect.gen(function* () {
          yield* Deferred.succeed(entered, undefined)
          yield* Deferred.await(gate)
          yield* inner.writeSnapshot(s, snapshot)
          written.push({ version: snapshot.version, afterClose: closed.value })
        }),
    }
    return { inner, store, gate, entered, written, closed }
  })

/** A handler over `store` in `scope`. */
export const handlerIn = (store: Store, scope: Scope.Scope, options: Sessions.Options) =>
  Sessions.make(options).pipe(
    Effect.provideService(EventStore, store),
    Effect.provide(Ids.Ids.layer),
    Effect.provideService(Scope.Scope, scope),
  )

/** A restart: a fresh handler over `store` loads `sessionId`, then closes. */
export const restart = (store: Store, sessionId: string, options: Sessions.Options) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sessions = yield* handlerIn(store, yield* Effect.scope, options)
      return yield* sessions.load(sessionId)
    }),
  )

export const SECRET = "the deploy key is hunter2-0123456789"

/**
 * One process (over `a`) records a session encrypted at rest, with `SECRET` in a user message; another (over `b`), not
 * encrypting, continues it with `commands`, so its live state holds the text in plain and a snapshot falls due; while
 * that snapshot's write waits, the first process forgets the session; then the write is let go. `quiet` lets the
 * writer reach its write (TestClock's adjust, or nothing on a live clock). Answers the snapshot stored afterwards and a
 * restart's state encoded.
 */
export const forgetRace = (
  a: Store,
  b: Store,
  sessionId: string,
  start: Sessions.Command,
  commands: ReadonlyArray<Sessions.Command>,
  quiet: Effect.Effect<void>,
): Effect.Effect<{ readonly stored: StoredSnapshot | undefined; readonly restarted: string }> =>
  Effect.gen(function* () {
    const sealing = yield* Scope.make()
    const first = yield* handlerIn(a, sealing, { encryptAtRest: true })
    yield* first.execute(sessionId, start)
    yield* first.execute(sessionId, {
      _tag: "AddUserMessage",
      message: {
        role: "user",
        id: Ids.unsafe.message("msg_00000000_secret"),
        createdAt: 1,
        parts: [{ type: "text", id: Ids.unsafe.part("prt_00000000_secret"), text: SECRET }],
      },
    })
    yield* Scope.close(sealing, Exit.void)
    const { store, gate, entered } = yield* gatedOver(b)
    const scope = yield* Scope.make()
    const second = yield* handlerIn(store, scope, { snapshots: { every: 1 } })
    for (const command of commands) yield* second.execute(sessionId, command)
    yield* quiet
    yield* Deferred.await(entered)
    yield* SessionLog.forget(sessionId).pipe(Effect.provideService(EventStore, a))
    yield* Deferred.succeed(gate, undefined)
    yield* second.flushSnapshots
    yield* Scope.close(scope, Exit.void)
    const stored = yield* b.readSnapshot(`session-${sessionId}`)
    const restarted = yield* restart(b, sessionId, { snapshots: { every: 1 } })
    return { stored, restarted: Sessions.encodeSnapshot(restarted) }
  }).pipe(Effect.orDie)
