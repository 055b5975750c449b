/**
 * Issue 23: no store round trip when nothing can have changed. A store that knows a stream's version without I/O
 * (`knownVersion`: the memory store) lets `Sessions` skip asking for new events; another writer's appends are still
 * seen by the next load.
 */
import { Events, Ids } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"

const SESSION = "ses_known"
const stream = Events.streamName(SESSION)
type Store = EventStore["Service"]

const start = (at: number): Sessions.Command => ({
  _tag: "AddUserMessage",
  message: {
    role: "user",
    id: Ids.unsafe.message(`msg_${String(at).padStart(8, "0")}`),
    createdAt: at,
    parts: [{ type: "text", id: Ids.unsafe.part(`prt_${String(at).padStart(8, "0")}`), text: `hello ${at}` }],
  },
})

/** Two handlers over one memory store (two writers), the second counting the reads it makes. */
const twoWriters = Effect.gen(function* () {
  const store = yield* EventStore
  const reads: Array<number> = []
  const counted: Store = {
    ...store,
    read: (s, o) =>
      Effect.andThen(
        Effect.sync(() => reads.push(o?.from ?? 1)),
        store.read(s, o),
      ),
  }
  const handler = (s: Store) =>
    Sessions.make().pipe(Effect.provideService(EventStore, s), Effect.provide(Ids.Ids.layer))
  return { store, reads, a: yield* handler(store), b: yield* handler(counted) }
}).pipe(Effect.provide(Layer.fresh(EventStore.layerMemory())))

describe("Sessions over a store that knows its versions", () => {
  it("loads an unchanged session without reading, and sees another writer's events at the next load", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { store, reads, a, b } = yield* twoWriters
        yield* a.execute(SESSION, [
          {
            _tag: "StartSession",
            sessionId: Ids.unsafe.session(SESSION),
            at: 1,
            model: { providerId: "p", modelId: "m" },
          },
          start(2),
        ])
        expect(store.knownVersion?.(stream)).toBe(2)
        expect((yield* b.load(SESSION)).session.version).toBe(2)
        const first = reads.length
        expect(first).toBeGreaterThan(0)
        // Nothing appended since: no read.
        expect((yield* b.load(SESSION)).session.version).toBe(2)
        yield* b.execute(SESSION, start(3))
        expect((yield* b.load(SESSION)).session.version).toBe(3)
        expect(reads.length).toBe(first)
        // The other writer appends: the next load reads and folds it.
        yield* a.execute(SESSION, start(4))
        const seen = yield* b.load(SESSION)
        expect(seen.session.version).toBe(4)
        expect(reads.length).toBe(first + 1)
        expect(reads.at(-1)).toBe(4)
      }),
    )
  })

  it("the memory store's known version is its stream version, 0 for no stream", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const { store, a } = yield* twoWriters
        expect(store.knownVersion?.(stream)).toBe(0)
        yield* a.execute(SESSION, {
          _tag: "StartSession",
          sessionId: Ids.unsafe.session(SESSION),
          at: 1,
          model: { providerId: "p", modelId: "m" },
        })
        expect(store.knownVersion?.(stream)).toBe(yield* store.streamVersion(stream))
        expect(store.knownVersion?.("other")).toBe(0)
      }),
    )
  })
})
