/**
 * ADR 0024: snapshots are written off the command's path, by a fiber of the handler's scope, at a moment without
 * appends (at most `SNAPSHOT_DEFER` late). A command that makes one due returns without waiting for its write; the
 * snapshot written is exactly the state at the version it names, however late; the scope's close writes what is due,
 * or drops it after `flushTimeout` and writes nothing after; a forget committed while a snapshot waits wins over it.
 * The forget race on PostgreSQL, across two store layers: `SnapshotWriter.pg.slow.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Events } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Deferred, Effect, Exit, Fiber, type Layer, Result, Scope } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { type Action, run as generate, generatedArb } from "../../core/test/support/sessions.ts"
import { observe, type Store } from "./support/snapshots.ts"
import { forgetRace, gatedOver, handlerIn, restart as restartOf } from "./support/snapshotWriter.ts"

const SESSION = "ses_generated"
const stream = Events.streamName(SESSION)

const actions: ReadonlyArray<Action> = Array.from({ length: 16 }, (_, i) =>
  i % 2 === 0
    ? { kind: "user", text: 30, image: false }
    : { kind: "step", tools: [{ tool: "read", size: 200, status: "completed" }], tokens: 1_000, finish: "stop" },
)
const generated = generate(actions)

/** A fresh memory store's service. */
const memory = Effect.provide(
  Effect.gen(function* () {
    return yield* EventStore
  }),
  EventStore.layerMemory() as Layer.Layer<EventStore>,
)

/** A memory store whose snapshot writes wait on a gate (see `gatedOver`). */
const gated = Effect.flatMap(memory, gatedOver)

const restart = (store: Store, options: Sessions.Options) => restartOf(store, SESSION, options)

/** The versions at which a handler with `every` makes a snapshot due (no pivot in `generated`). */
const dueVersions = (every: number) => {
  const out: Array<number> = []
  let version = 0
  for (const step of generated.steps) {
    version += step.events.length
    if (version - (out.at(-1) ?? 0) >= every) out.push(version)
  }
  return out
}

describe("the snapshot writer", () => {
  it.effect(
    "a command returns while a snapshot write is blocked; the latest of the ones due meanwhile follows it",
    () =>
      Effect.gen(function* () {
        const { inner, store, gate, entered, written } = yield* gated
        const scope = yield* Scope.make()
        const sessions = yield* handlerIn(store, scope, { snapshots: { every: 4 } })
        const due = dueVersions(4)
        const half = generated.steps.length >> 1
        const firstHalf = due.filter((v) => v <= generated.steps.slice(0, half).flatMap((s) => s.events).length)
        expect(firstHalf.length).toBeGreaterThan(0)
        expect(due.length - firstHalf.length).toBeGreaterThan(1)
        for (const step of generated.steps.slice(0, half)) yield* sessions.execute(SESSION, step.command)
        // A quiet moment: the writer takes the slot and blocks on the gate.
        yield* TestClock.adjust(Sessions.SNAPSHOT_QUIET)
        yield* Deferred.await(entered)
        // Every later command completes while that write is blocked, and makes further snapshots due.
        for (const step of generated.steps.slice(half)) yield* sessions.execute(SESSION, step.command)
        expect(written).toEqual([])
        expect(yield* inner.readSnapshot(stream)).toBeUndefined()
        // Released: the blocked one, then only the latest of the ones due meanwhile (one slot per session).
        yield* Deferred.succeed(gate, undefined)
        yield* sessions.flushSnapshots
        expect(written.map((w) => w.version)).toEqual([firstHalf.at(-1), due.at(-1)])
        expect((yield* inner.readSnapshot(stream))?.version).toBe(due.at(-1))
        yield* Scope.close(scope, Exit.void)
      }),
  )

  it.effect("the writer waits for a moment without appends, and at most SNAPSHOT_DEFER when there is none", () =>
    Effect.gen(function* () {
      const long = generate(Array.from({ length: 400 }, () => ({ kind: "user" as const, text: 5, image: false })))
      const store = yield* memory
      const scope = yield* Scope.make()
      const sessions = yield* handlerIn(store, scope, { snapshots: { every: 1 } })
      const [first, ...rest] = long.steps
      yield* sessions.execute(SESSION, first!.command)
      yield* TestClock.adjust(Sessions.SNAPSHOT_QUIET - 1)
      expect(yield* store.readSnapshot(stream)).toBeUndefined()
      yield* TestClock.adjust(1)
      expect((yield* store.readSnapshot(stream))?.version).toBe(1)
      // A command every SNAPSHOT_QUIET - 1 ms: never quiet, so the writer writes once SNAPSHOT_DEFER has passed.
      let elapsed = 0
      let version = 1
      for (const step of rest) {
        yield* sessions.execute(SESSION, step.command)
        version++
        yield* TestClock.adjust(Sessions.SNAPSHOT_QUIET - 1)
        elapsed += Sessions.SNAPSHOT_QUIET - 1
        const stored = (yield* store.readSnapshot(stream))?.version ?? 0
        if (stored > 1) {
          expect(stored).toBe(version)
          break
        }
      }
      expect(elapsed).toBeGreaterThanOrEqual(Sessions.SNAPSHOT_DEFER)
      expect(elapsed).toBeLessThan(Sessions.SNAPSHOT_DEFER + 2 * Sessions.SNAPSHOT_QUIET)
      yield* Scope.close(scope, Exit.void)
    }),
  )

  it("the snapshot written late is exactly the state at its version: decoded, it equals a fold of the events up to it; a restart from it equals a fold of all", async () => {
    let late = 0
    await fc.assert(
      fc.asyncProperty(generatedArb(40), fc.integer({ min: 1, max: 6 }), async (session, every) => {
        const program = Effect.gen(function* () {
          const { inner, store, gate } = yield* gated
          // Without snapshots at rest: the close would write the head, and this property is about the late ones.
          const options: Sessions.Options = { snapshots: { every, idle: false } }
          const scope = yield* Scope.make()
          const sessions = yield* handlerIn(store, scope, options)
          // Every command runs before any snapshot is written: each is encoded after later commands were folded.
          for (const step of session.steps) yield* sessions.execute(SESSION, step.command)
          yield* Deferred.succeed(gate, undefined)
          yield* Scope.close(scope, Exit.void)
          const stored = yield* inner.readSnapshot(stream)
          const restarted = yield* restart(inner, options)
          return { stored, restarted }
        })
        const { stored, restarted } = await Effect.runPromise(program)
        if (stored !== undefined) {
          const decoded = Sessions.decodeSnapshot(SESSION, stored)
          expect(Result.isSuccess(decoded)).toBe(true)
          const at = Sessions.fold(session.events.slice(0, stored.version))
          expect(observe(Result.getOrThrow(decoded))).toEqual(observe(at))
          if (stored.version < session.events.length) late++
        }
        expect(observe(restarted)).toEqual(observe(Sessions.fold(session.events)))
      }),
      { numRuns: 60 },
    )
    // Snapshots encoded while the live state had moved past them were among those checked.
    expect(late).toBeGreaterThan(0)
  }, 120_000)

  it.effect("the close writes the snapshots still due (a process that exits right after its command keeps them)", () =>
    Effect.gen(function* () {
      const store = yield* memory
      const scope = yield* Scope.make()
      const sessions = yield* handlerIn(store, scope, { snapshots: { every: 4, idle: false } })
      for (const step of generated.steps) yield* sessions.execute(SESSION, step.command)
      yield* Scope.close(scope, Exit.void)
      expect((yield* store.readSnapshot(stream))?.version).toBe(dueVersions(4).at(-1))
    }),
  )

  // ADR 0069: at rest (no append for `idle`) and at the close, a session appended to is snapshotted at its head, so a
  // restart after a clean close or a kill at rest folds no event after its snapshot.
  it.effect(
    "at rest: none while appends come within `idle`, none 1 ms before `idle` after the last, one at the head by twice `idle`",
    () =>
      Effect.gen(function* () {
        const store = yield* memory
        const scope = yield* Scope.make()
        const sessions = yield* handlerIn(store, scope, { snapshots: { idle: "1 second" } })
        const steps = generated.steps
        const head = generated.events.length
        expect(head).toBeLessThan(200)
        // A command every 999 ms: never at rest, so nothing is written (the cadence of 200 is not reached either).
        for (const step of steps) {
          yield* sessions.execute(SESSION, step.command)
          yield* TestClock.adjust(999)
        }
        yield* sessions.flushSnapshots
        expect(yield* store.readSnapshot(stream)).toBeUndefined()
        // Rest is checked every `idle`: the head is written between `idle` and twice `idle` after the last append.
        yield* TestClock.adjust(1_000)
        yield* sessions.flushSnapshots
        const stored = yield* store.readSnapshot(stream)
        expect(stored?.version).toBe(head)
        expect(observe(Result.getOrThrow(Sessions.decodeSnapshot(SESSION, stored!)))).toEqual(
          observe(Sessions.fold(generated.events)),
        )
        yield* Scope.close(scope, Exit.void)
      }),
  )

  it.effect("the close writes a session appended to at its head; `idle: false` writes only the cadence's", () =>
    Effect.gen(function* () {
      // The cadence's last snapshot is not the head, so the two settings are told apart.
      expect(dueVersions(4).at(-1)).toBeLessThan(generated.events.length)
      for (const idle of ["1 second", false] as const) {
        const store = yield* memory
        const scope = yield* Scope.make()
        const sessions = yield* handlerIn(store, scope, { snapshots: { every: 4, idle } })
        for (const step of generated.steps) yield* sessions.execute(SESSION, step.command)
        yield* Scope.close(scope, Exit.void)
        const expected = idle === false ? dueVersions(4).at(-1) : generated.events.length
        expect((yield* store.readSnapshot(stream))?.version).toBe(expected)
      }
    }),
  )

  it.effect("a session only read is never snapshotted at rest or at the close (a reader writes nothing)", () =>
    Effect.gen(function* () {
      const store = yield* memory
      const writer = yield* Scope.make()
      const recording = yield* handlerIn(store, writer, { snapshots: false })
      for (const step of generated.steps) yield* recording.execute(SESSION, step.command)
      yield* Scope.close(writer, Exit.void)
      const scope = yield* Scope.make()
      const reader = yield* handlerIn(store, scope, { snapshots: { idle: "1 second" } })
      const state = yield* reader.load(SESSION)
      expect(state.session.version).toBe(generated.events.length)
      yield* TestClock.adjust("1 minute")
      yield* reader.flushSnapshots
      yield* Scope.close(scope, Exit.void)
      expect(yield* store.readSnapshot(stream)).toBeUndefined()
    }),
  )

  it.effect(
    "closed while a snapshot write is blocked: the close ends after flushTimeout without an error, nothing is written after it, the next open is correct",
    () =>
      Effect.gen(function* () {
        const { inner, store, gate, entered, written, closed } = yield* gated
        const scope = yield* Scope.make()
        const sessions = yield* handlerIn(store, scope, { snapshots: { every: 4, flushTimeout: "2 seconds" } })
        const half = generated.steps.length >> 1
        for (const step of generated.steps.slice(0, half)) yield* sessions.execute(SESSION, step.command)
        yield* TestClock.adjust(Sessions.SNAPSHOT_QUIET)
        yield* Deferred.await(entered)
        // More snapshots fall due behind the blocked one.
        for (const step of generated.steps.slice(half)) yield* sessions.execute(SESSION, step.command)
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
        yield* TestClock.adjust("1 second")
        expect(closing.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust("1 second")
        expect(Exit.isSuccess(yield* Fiber.await(closing))).toBe(true)
        closed.value = true
        // The blocked write is released after the close: it was interrupted, so it never reaches the store.
        yield* Deferred.succeed(gate, undefined)
        yield* Effect.yieldNow
        // What was still due was dropped with it: a flush after the close writes nothing either.
        yield* sessions.flushSnapshots
        expect(written).toEqual([])
        expect(yield* inner.readSnapshot(stream)).toBeUndefined()
        // The next open folds the events (no snapshot) to the same state.
        const reopened = yield* restart(inner, { snapshots: { every: 4 } })
        expect(observe(reopened)).toEqual(observe(Sessions.fold(generated.events)))
      }),
  )

  it.effect(
    "a forget committed while a snapshot of the text it erases waits: the snapshot is not written, and a restart reads the text as erased",
    () =>
      Effect.gen(function* () {
        const store = yield* memory
        const [start, ...rest] = generated.steps
        const { stored, restarted } = yield* forgetRace(
          store,
          store,
          SESSION,
          start!.command,
          rest.slice(0, 3).map((step) => step.command),
          TestClock.adjust(Sessions.SNAPSHOT_QUIET),
        )
        expect(stored?.data ?? "").not.toContain("hunter2")
        expect(stored).toBeUndefined()
        expect(restarted).not.toContain("hunter2")
        expect(restarted).toContain(EventStore.ERASED)
      }),
  )
})
