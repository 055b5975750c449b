/**
 * Issue 18 item 6: two store layers on one SQLite file in one process. `node:sqlite` waited for a lock synchronously
 * (SQLite's busy handler), so a writer waiting for the other layer's transaction blocked the very event loop that
 * transaction needed to finish: a stall of the whole busy timeout, then `database is locked`. A wait for a lock must
 * suspend the fiber, never the thread.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Events, Ids } from "@pivot/core"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { Reactivity } from "effect/reactivity"
import { TestClock } from "effect/testing"
import { EventStore, type NewEvent, type OnAppend, ReadModels, SessionLog, SqliteClient } from "../src/index.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-two-layers-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

// A transaction that spans turns of the event loop, as any hook doing I/O (or a long one the fiber scheduler splits)
// does: while it is open, the other layer's writer runs and finds the file locked.
const yielding: OnAppend = () =>
  Effect.andThen(
    Effect.yieldNow,
    Effect.promise(() => new Promise((r) => setImmediate(r))),
  )

/** A store layer of its own on `filename`, built in the test's scope (as each `createPivot` builds one). */
const open = (filename: string) =>
  Effect.map(Layer.build(EventStore.layerSqlite({ filename, onAppend: yielding, synchronous: "normal" })), (context) =>
    Context.get(context, EventStore),
  )

const event = (id: string, n: number): NewEvent => ({ id, type: "Noted", version: 1, data: { n } })

describe("two store layers on one SQLite file in one process", () => {
  it.live(
    "given 1,200 pairs of appends through two layers, interleaved inside their transactions, then none fails and all are stored in order",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, "pairs.db")
        const a = yield* open(filename)
        const b = yield* open(filename)
        const pairs = 1_200
        for (let i = 0; i < pairs; i++) {
          yield* Effect.all(
            [a.append("stream-a", i, [event(`evt_a_${i}`, i)]), b.append("stream-b", i, [event(`evt_b_${i}`, i)])],
            { concurrency: 2 },
          )
        }
        expect(yield* b.streamVersion("stream-a")).toBe(pairs)
        expect(yield* a.streamVersion("stream-b")).toBe(pairs)
        const ids = (yield* b.read("stream-a")).map((e) => e.id)
        expect(ids).toEqual(Array.from({ length: pairs }, (_, i) => `evt_a_${i}`))
      }).pipe(Effect.scoped),
    120_000,
  )
})

/** `SessionStarted`, then user messages `from`..`from + count - 1`, as the entries `SessionLog.append` takes. */
const sessionEntries = (sessionId: string, from: number, count: number) =>
  Array.from({ length: count }, (_, i): { readonly id: string; readonly event: Events.Event } => {
    const n = String(from + i).padStart(6, "0")
    const event: Events.Event =
      from + i === 0
        ? { _tag: "SessionStarted", sessionId: Ids.unsafe.session(sessionId), at: 0 }
        : {
            _tag: "UserMessageAdded",
            at: from + i,
            message: {
              role: "user",
              id: Ids.unsafe.message(`msg_${sessionId.slice(4)}${n}`),
              createdAt: from + i,
              parts: [{ type: "text", id: Ids.unsafe.part(`prt_${sessionId.slice(4)}${n}`), text: `hello ${n}` }],
            },
          }
    return { id: SessionLog.eventId(sessionId, from + i + 1), event }
  })

describe("an import in one layer while another layer of the process appends", () => {
  it.live(
    "given a bulk import of 4,000 events (one transaction the scheduler splits) and 200 appends beside it, then both complete",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, "bulk.db")
        const importer = yield* Layer.build(ReadModels.layerSqlite({ filename, synchronous: "normal" }))
        const writer = yield* Layer.build(ReadModels.layerSqlite({ filename, synchronous: "normal" }))
        yield* SessionLog.append("ses_beside", 0, sessionEntries("ses_beside", 0, 1)).pipe(Effect.provide(writer))
        const importing = Context.get(importer, ReadModels.ReadModels)
          .bulk(
            Effect.gen(function* () {
              for (let from = 0; from < 4_000; from += 100)
                yield* SessionLog.append("ses_imported", from, sessionEntries("ses_imported", from, 100))
            }),
          )
          .pipe(Effect.provide(importer))
        const beside = Effect.gen(function* () {
          for (let v = 1; v <= 200; v++) yield* SessionLog.append("ses_beside", v, sessionEntries("ses_beside", v, 1))
        }).pipe(Effect.provide(writer))
        // Before ADR 0014 the writer's BEGIN waited inside SQLite for the import's lock, blocking the import's own
        // fiber: `database is locked` after the busy timeout.
        yield* Effect.all([importing, beside], { concurrency: 2 })
        const store = Context.get(writer, EventStore)
        expect(yield* store.streamVersion(Events.streamName("ses_imported"))).toBe(4_000)
        expect(yield* store.streamVersion(Events.streamName("ses_beside"))).toBe(201)
      }).pipe(Effect.scoped),
    120_000,
  )
})

describe("a statement that meets another connection's lock", () => {
  it.effect(
    "waits on the clock, not in SQLite: while it waits the holder's fiber runs and commits, then the statement succeeds",
    () =>
      Effect.gen(function* () {
        const filename = path.join(dir, "clock.db")
        const holder = yield* SqliteClient.make({ filename, busyTimeout: "2 seconds" })
        const waiter = yield* SqliteClient.make({ filename, busyTimeout: "2 seconds" })
        yield* holder`CREATE TABLE t (who TEXT NOT NULL)`
        const release = yield* Deferred.make<void>()
        const locked = yield* Deferred.make<void>()
        const holding = yield* Effect.forkChild(
          holder.withTransaction(
            Effect.gen(function* () {
              yield* holder`INSERT INTO t VALUES ('holder')`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(release) // the write lock is held across turns of the event loop
            }),
          ),
        )
        yield* Deferred.await(locked)
        const waiting = yield* Effect.forkChild(waiter`INSERT INTO t VALUES ('waiter')`)
        yield* TestClock.adjust("20 millis")
        // Before ADR 0014 the insert waited in SQLite's busy handler, blocking this fiber too, and failed.
        expect(waiting.pollUnsafe()).toBeUndefined()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holding)
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(waiting)
        expect(yield* waiter`SELECT who FROM t ORDER BY rowid`).toEqual([{ who: "holder" }, { who: "waiter" }])
      }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)),
  )

  it.effect("gives up with LockTimeoutError once the busy timeout is spent on the clock", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "timeout.db")
      const holder = yield* SqliteClient.make({ filename, busyTimeout: "2 seconds" })
      const waiter = yield* SqliteClient.make({ filename, busyTimeout: "500 millis" })
      yield* holder`CREATE TABLE t (who TEXT NOT NULL)`
      const release = yield* Deferred.make<void>()
      const locked = yield* Deferred.make<void>()
      yield* Effect.forkChild(
        holder.withTransaction(
          Effect.andThen(Deferred.succeed(locked, undefined), Deferred.await(release)).pipe(
            Effect.andThen(holder`INSERT INTO t VALUES ('holder')`),
          ),
        ),
      )
      yield* Deferred.await(locked)
      const waiting = yield* Effect.forkChild(Effect.flip(waiter`INSERT INTO t VALUES ('waiter')`))
      yield* TestClock.adjust("300 millis")
      expect(waiting.pollUnsafe()).toBeUndefined() // still inside its budget
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(waiting)
      expect(error.reason._tag).toBe("LockTimeoutError")
      yield* Deferred.succeed(release, undefined)
    }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)),
  )
})

describe("forget while another connection reads an older snapshot", () => {
  it.effect("keeps trying to empty the write-ahead log on the clock, and empties it once the reader is done", () =>
    Effect.gen(function* () {
      const filename = path.join(dir, "forget.db")
      const store = Context.get(yield* Layer.build(EventStore.layerSqlite({ filename })), EventStore)
      yield* store.append("s", "no-stream", [event("evt_1", 1)])
      const reader = new DatabaseSync(filename)
      reader.exec("BEGIN")
      reader.prepare("SELECT count(*) FROM pivot_events").get()
      yield* store.append("s", 1, [event("evt_2", 2)]) // the reader's snapshot is now older than the log's end
      const forgetting = yield* Effect.forkChild(store.forget("s"))
      yield* TestClock.adjust("100 millis")
      expect(forgetting.pollUnsafe()).toBeUndefined() // waiting for the reader, on the clock
      reader.exec("COMMIT")
      reader.close()
      yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(forgetting)).logCleared).toBe(true)
    }).pipe(Effect.scoped),
  )
})
