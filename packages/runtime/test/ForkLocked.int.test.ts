/**
 * Issue 32, defect 3, on the clock: another connection holds a SQLite file's write lock (as a fork copying a long
 * parent does) past the busy timeout. A writer's command and a fork into an id another fork is taking must wait it
 * out, not fail with `StoreUnavailable` (`database is locked`): the writer's append goes through once the lock is
 * released, and the fork that lost the race answers `ForkTargetExists`. The lock is a raw `BEGIN IMMEDIATE` on a
 * second connection; the waits are on `TestClock`. The race with real processes is `scripts/bench/forks.ts`
 * (`ForkRace.slow.test.ts`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Ids } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { ReadModels } from "@pivot/store"
import { Context, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-fork-locked-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A handler of its own on `filename` (its own connection), built in the test's scope. */
const open = (filename: string) =>
  Effect.map(
    Layer.build(
      Sessions.Sessions.layer({ snapshots: false }).pipe(
        Layer.provide(Ids.Ids.layer),
        Layer.provide(ReadModels.layerSqlite({ filename })),
      ),
    ),
    (context) => Context.get(context, Sessions.Sessions),
  )

const message = (n: number) =>
  ({
    _tag: "AddUserMessage",
    message: {
      role: "user",
      id: Ids.unsafe.message(`msg_${n}`),
      createdAt: n,
      parts: [{ type: "text", id: Ids.unsafe.part(`prt_${n}`), text: `message ${n}` }],
    },
  }) as const

/** A file with a parent session of a few messages, and a raw connection that can take its write lock. */
const parentOn = (name: string) =>
  Effect.gen(function* () {
    const filename = path.join(dir, name)
    const sessions = yield* open(filename)
    yield* sessions.execute("ses_parent", {
      _tag: "StartSession",
      sessionId: Ids.unsafe.session("ses_parent"),
      at: 0,
    })
    for (let n = 1; n <= 3; n++) yield* sessions.execute("ses_parent", message(n))
    const raw = new DatabaseSync(filename)
    yield* Effect.addFinalizer(() => Effect.sync(() => raw.close()))
    return { filename, sessions, raw }
  })

describe("a write lock held past the busy timeout (issue 32, defect 3)", () => {
  it.effect("a writer's command waits it out on the conflict schedule and is stored once the lock is released", () =>
    Effect.gen(function* () {
      const { sessions, raw } = yield* parentOn("writer.db")
      raw.exec("BEGIN IMMEDIATE")
      const writing = yield* Effect.forkChild(sessions.execute("ses_parent", message(4)))
      // Past the store's 5 s busy timeout: before the fix the command failed here with `database is locked`.
      yield* TestClock.adjust("7 seconds")
      expect(writing.pollUnsafe()).toBeUndefined()
      raw.exec("COMMIT")
      yield* TestClock.adjust("10 seconds")
      const { state } = yield* Fiber.join(writing)
      expect(state.session.version).toBe(5)
      expect((yield* sessions.events("ses_parent")).filter((e) => e._tag === "UserMessageAdded")).toHaveLength(4)
    }).pipe(Effect.scoped),
  )

  it.effect("a lock that outlasts every attempt is reported as itself (StoreUnavailable), not as a conflict", () =>
    Effect.gen(function* () {
      const { sessions, raw } = yield* parentOn("forever.db")
      raw.exec("BEGIN IMMEDIATE")
      const writing = yield* Effect.forkChild(Effect.flip(sessions.execute("ses_parent", message(4))))
      // 30 attempts of up to 5 s each, and the waits between them (at most 1 s each).
      yield* TestClock.adjust("10 minutes")
      const error = yield* Fiber.join(writing)
      raw.exec("ROLLBACK")
      expect(error._tag).toBe("StoreUnavailable")
      expect(error.message).toMatch(/database is locked/)
    }).pipe(Effect.scoped),
  )

  it.effect("a fork that lost the race for its id while waiting answers ForkTargetExists", () =>
    Effect.gen(function* () {
      const { filename, sessions, raw } = yield* parentOn("fork.db")
      const winner = yield* open(filename)
      raw.exec("BEGIN IMMEDIATE")
      const loser = yield* Effect.forkChild(Effect.flip(sessions.fork("ses_parent", "ses_child")))
      yield* TestClock.adjust("7 seconds")
      // Before the fix the loser had failed here with `database is locked`.
      expect(loser.pollUnsafe()).toBeUndefined()
      raw.exec("COMMIT")
      // The winner forks while the loser sleeps between attempts (the clock stands still).
      expect((yield* winner.fork("ses_parent", "ses_child")).version).toBe(5)
      yield* TestClock.adjust("10 seconds")
      const error = yield* Fiber.join(loser)
      expect(error._tag).toBe("ForkTargetExists")
      expect((yield* sessions.events("ses_child")).length).toBe(5)
    }).pipe(Effect.scoped),
  )

  it.effect("a fork that waited out the lock with no rival forks", () =>
    Effect.gen(function* () {
      const { sessions, raw } = yield* parentOn("alone.db")
      raw.exec("BEGIN IMMEDIATE")
      const forking = yield* Effect.forkChild(sessions.fork("ses_parent", "ses_child"))
      yield* TestClock.adjust("7 seconds")
      expect(forking.pollUnsafe()).toBeUndefined()
      raw.exec("COMMIT")
      yield* TestClock.adjust("10 seconds")
      expect((yield* Fiber.join(forking)).version).toBe(5)
    }).pipe(Effect.scoped),
  )
})
