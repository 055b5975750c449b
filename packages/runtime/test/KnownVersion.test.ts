/**
 * Issue 23: no store round trip when nothing can have changed. A store that knows without I/O that a stream has no
 * event after a version (`nothingAfter`: the memory store always, SQLite after a read while no connection has written
 * since) lets `Sessions` skip asking for new events; another writer's appends are still seen by the next load.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Events, Ids } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Context, Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"

const SESSION = "ses_known"
const stream = Events.streamName(SESSION)
type Store = EventStore["Service"]
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-known-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const started: Sessions.Command = {
  _tag: "StartSession",
  sessionId: Ids.unsafe.session(SESSION),
  at: 1,
  model: { providerId: "p", modelId: "m" },
}
const said = (at: number): Sessions.Command => ({
  _tag: "AddUserMessage",
  message: {
    role: "user",
    id: Ids.unsafe.message(`msg_${String(at).padStart(8, "0")}`),
    createdAt: at,
    parts: [{ type: "text", id: Ids.unsafe.part(`prt_${String(at).padStart(8, "0")}`), text: `hello ${at}` }],
  },
})

const storeOf = (layer: Layer.Layer<EventStore, unknown>) =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, EventStore))

/** Two writers on one store (the memory store) or one file (two SQLite connections); `b` counts its reads. */
const twoWriters = (kind: "memory" | "sqlite") =>
  Effect.gen(function* () {
    const filename = path.join(dir, `${Math.random().toString(36).slice(2)}.db`)
    const layer = () =>
      kind === "memory" ? EventStore.layerMemory() : EventStore.layerSqlite({ filename, synchronous: "normal" })
    const storeA = yield* storeOf(layer())
    const storeB = kind === "memory" ? storeA : yield* storeOf(layer())
    const reads: Array<number> = []
    const counted: Store = {
      ...storeB,
      read: (s, o) =>
        Effect.andThen(
          Effect.sync(() => reads.push(o?.from ?? 1)),
          storeB.read(s, o),
        ),
    }
    const handler = (s: Store) =>
      Sessions.make().pipe(Effect.provideService(EventStore, s), Effect.provide(Ids.Ids.layer))
    return { storeA, storeB, reads, a: yield* handler(storeA), b: yield* handler(counted) }
  })

const run = <A, E>(effect: Effect.Effect<A, E, import("effect").Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(effect) as Effect.Effect<A>)

describe.each(["memory", "sqlite"] as const)("Sessions over a store that knows nothing was appended (%s)", (kind) => {
  it("loads an unchanged session without reading, and sees another writer's events at the next load", () =>
    run(
      Effect.gen(function* () {
        const { reads, a, b } = yield* twoWriters(kind)
        yield* a.execute(SESSION, [started, said(2)])
        expect((yield* b.load(SESSION)).session.version).toBe(2)
        const first = reads.length
        expect(first).toBeGreaterThan(0)
        // Nothing appended since: no read.
        expect((yield* b.load(SESSION)).session.version).toBe(2)
        expect(reads.length).toBe(first)
        // Its own append: still no read (the store knows what it appended).
        yield* b.execute(SESSION, said(3))
        expect((yield* b.load(SESSION)).session.version).toBe(3)
        const own = reads.length
        expect(own).toBe(first)
        // The other writer appends: the next load reads and folds it, the one after does not read again.
        yield* a.execute(SESSION, said(4))
        expect((yield* b.load(SESSION)).session.version).toBe(4)
        expect(reads.length).toBe(own + 1)
        expect(reads.at(-1)).toBe(4)
        expect((yield* b.load(SESSION)).session.version).toBe(4)
        expect(reads.length).toBe(own + 1)
      }),
    ))

  it("the store says nothing follows a version only when nothing does", () =>
    run(
      Effect.gen(function* () {
        const { storeA, storeB, a } = yield* twoWriters(kind)
        yield* storeB.read(stream)
        expect(storeB.nothingAfter?.(stream, 0)).toBe(true)
        yield* a.execute(SESSION, [started, said(2)])
        // Written by the other connection (or this store): not known until read again.
        expect(storeB.nothingAfter?.(stream, 0)).toBe(false)
        expect(storeB.nothingAfter?.(stream, 1)).toBe(false)
        yield* storeB.read(stream, { from: 2 })
        expect(storeB.nothingAfter?.(stream, 1)).toBe(false)
        expect(storeB.nothingAfter?.(stream, 2)).toBe(true)
        // After its own append the store knows its stream's head; a write through the connection since, not.
        expect(storeA.nothingAfter?.(stream, 2)).toBe(true)
        expect(storeA.nothingAfter?.(stream, 1)).toBe(false)
        yield* storeA.writeSnapshot(stream, { version: 2, format: "test", data: "{}" })
        expect(storeA.nothingAfter?.(stream, 2)).toBe(kind === "memory")
      }),
    ))
})
