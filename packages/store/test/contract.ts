// The EventStore contract: one suite, run against every backend by the `*.int.test.ts` files.
import { Clock, Context, Effect, Fiber, Layer, Result, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, type NewEvent, type ReadError, type RecordedEvent, Snapshot } from "../src/index.ts"

/** One empty store of a backend; `open()` connects to it (again: two opens are two connections to one store). */
export interface StoreHandle {
  readonly open: () => Layer.Layer<EventStore, ReadError>
}

/** A backend under test. */
export interface Backend {
  readonly name: string
  readonly fresh: () => Promise<StoreHandle>
  readonly cleanup?: () => Promise<void>
}

/** An event with a small payload naming its id. */
export const ev = (id: string, data: unknown = { id }, type = "Tested"): NewEvent => ({ id, type, version: 1, data })

/** The store of a layer, built into the current scope. */
export const storeOf = (layer: Layer.Layer<EventStore, ReadError>) =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, EventStore))

const runIn = <A, E>(handle: StoreHandle, effect: Effect.Effect<A, E, EventStore>): Promise<A> =>
  Effect.runPromise(Effect.provide(effect, handle.open()))

const all = Effect.gen(function* () {
  const store = yield* EventStore
  return yield* Stream.runCollect(store.readAll())
})
const ids = (events: ReadonlyArray<RecordedEvent>) => events.map((event) => event.id)

// Provides a clock whose wall time is `millis`, sleeping on the live clock.
const atTime =
  (millis: number) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.clockWith((live) =>
      Effect.provideService(effect, Clock.Clock, {
        currentTimeMillisUnsafe: () => millis,
        currentTimeMillis: Effect.succeed(millis),
        currentTimeNanosUnsafe: () => BigInt(millis) * 1_000_000n,
        currentTimeNanos: Effect.succeed(BigInt(millis) * 1_000_000n),
        monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
        monotonicTimeNanos: live.monotonicTimeNanos,
        sleep: (duration) => live.sleep(duration),
      }),
    )

/** Registers the contract suite for a backend. */
export const contract = (backend: Backend): void => {
  describe(`EventStore contract: ${backend.name}`, { timeout: 30_000 }, () => {
    afterAll(async () => {
      await backend.cleanup?.()
    })
    const withStore = async <A, E>(effect: Effect.Effect<A, E, EventStore>): Promise<A> =>
      runIn(await backend.fresh(), effect)

    // Runs `attempt` against a stream prepared by `setup`, expects `tag`, and checks that nothing was written.
    const failsAndWritesNothing = (
      setup: Effect.Effect<unknown, unknown, EventStore>,
      attempt: Effect.Effect<unknown, { readonly _tag: string }, EventStore>,
    ) =>
      Effect.gen(function* () {
        yield* setup
        const before = yield* all
        const error = yield* Effect.flip(attempt)
        const after = yield* all
        expect(after).toEqual(before)
        return error
      })

    describe("expected version", () => {
      it("any: given no stream, then a stream, when appending with any, then both appends succeed", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            expect(yield* store.append("s", "any", [ev("a"), ev("b")])).toEqual({ streamVersion: 2, position: 2 })
            expect(yield* store.append("s", "any", [ev("c")])).toEqual({ streamVersion: 3, position: 3 })
            expect(ids(yield* store.read("s"))).toEqual(["a", "b", "c"])
          }),
        ))

      it("no-stream: given no stream, when appending, then the stream starts at version 1", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            expect(yield* store.streamVersion("s")).toBe(0)
            const result = yield* store.append("s", "no-stream", [ev("a"), ev("b"), ev("c")])
            expect(result).toEqual({ streamVersion: 3, position: 3 })
            expect((yield* store.read("s")).map((e) => e.streamVersion)).toEqual([1, 2, 3])
            expect(yield* store.streamVersion("s")).toBe(3)
          }),
        ))

      it("no-stream fails: given a stream at version 2, then WrongExpectedVersion{actual 2} and nothing written", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const error = yield* failsAndWritesNothing(
              store.append("s", "no-stream", [ev("a"), ev("b")]),
              store.append("s", "no-stream", [ev("c")]),
            )
            expect(error).toMatchObject({ _tag: "WrongExpectedVersion", stream: "s", expected: "no-stream", actual: 2 })
          }),
        ))

      it("stream-exists: given a stream, when appending, then it succeeds", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [ev("a")])
            expect(yield* store.append("s", "stream-exists", [ev("b")])).toEqual({ streamVersion: 2, position: 2 })
          }),
        ))

      it("stream-exists fails: given no stream, then WrongExpectedVersion{actual 0} and nothing written", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const error = yield* failsAndWritesNothing(
              store.append("other", "no-stream", [ev("x")]),
              store.append("s", "stream-exists", [ev("a")]),
            )
            expect(error).toMatchObject({
              _tag: "WrongExpectedVersion",
              stream: "s",
              expected: "stream-exists",
              actual: 0,
            })
          }),
        ))

      it("exact: given version n, when appending with n, then it succeeds; 0 works for a new stream", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            expect(yield* store.append("s", 0, [ev("a"), ev("b")])).toEqual({ streamVersion: 2, position: 2 })
            expect(yield* store.append("s", 2, [ev("c")])).toEqual({ streamVersion: 3, position: 3 })
            expect(yield* store.append("t", 0, [ev("d")])).toEqual({ streamVersion: 1, position: 4 })
          }),
        ))

      it("exact fails: given version 2, when expecting 1, 3 or 0, then WrongExpectedVersion{actual 2}, nothing written", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [ev("a"), ev("b")])
            for (const expected of [1, 3, 0]) {
              const error = yield* failsAndWritesNothing(Effect.void, store.append("s", expected, [ev(`x${expected}`)]))
              expect(error).toMatchObject({ _tag: "WrongExpectedVersion", stream: "s", expected, actual: 2 })
            }
            expect(yield* store.streamVersion("s")).toBe(2)
          }),
        ))

      it("exact fails: given no stream, when expecting 1, then WrongExpectedVersion{actual 0}", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const error = yield* failsAndWritesNothing(Effect.void, store.append("s", 1, [ev("a")]))
            expect(error).toMatchObject({ _tag: "WrongExpectedVersion", expected: 1, actual: 0 })
          }),
        ))

      it("an empty batch only checks the expected version and reports the stream's head", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            expect(yield* store.append("s", "no-stream", [])).toEqual({ streamVersion: 0, position: 0 })
            yield* store.append("t", "any", [ev("a")])
            yield* store.append("s", "any", [ev("b"), ev("c")])
            expect(yield* store.append("s", 2, [])).toEqual({ streamVersion: 2, position: 3 })
            const error = yield* Effect.flip(store.append("s", 1, []))
            expect(error).toMatchObject({ _tag: "WrongExpectedVersion", actual: 2 })
            expect(ids(yield* all)).toEqual(["a", "b", "c"])
          }),
        ))
    })

    describe("ordering and content", () => {
      it("a stream reads back in stream order with inclusive from/to bounds", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [ev("1"), ev("2"), ev("3")])
            yield* store.append("other", "any", [ev("o")])
            yield* store.append("s", 3, [ev("4"), ev("5")])
            expect(ids(yield* store.read("s"))).toEqual(["1", "2", "3", "4", "5"])
            expect(ids(yield* store.read("s", { from: 2, to: 4 }))).toEqual(["2", "3", "4"])
            expect(ids(yield* store.read("s", { from: 4 }))).toEqual(["4", "5"])
            expect(ids(yield* store.read("s", { to: 1 }))).toEqual(["1"])
            expect(ids(yield* store.read("s", { from: 3, to: 99 }))).toEqual(["3", "4", "5"])
            expect(yield* store.read("s", { from: 4, to: 3 })).toEqual([])
            expect(yield* store.read("missing")).toEqual([])
          }),
        ))

      it("the global log is in append order across streams with strictly increasing positions", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("a", "any", [ev("a1")])
            yield* store.append("b", "any", [ev("b1"), ev("b2")])
            yield* store.append("a", "any", [ev("a2")])
            yield* store.append("c", "any", [ev("c1")])
            const log = yield* all
            expect(ids(log)).toEqual(["a1", "b1", "b2", "a2", "c1"])
            expect(log.map((e) => [e.stream, e.streamVersion])).toEqual([
              ["a", 1],
              ["b", 1],
              ["b", 2],
              ["a", 2],
              ["c", 1],
            ])
            for (let i = 1; i < log.length; i++) expect(log[i]!.position).toBeGreaterThan(log[i - 1]!.position)
          }),
        ))

      it("a recorded event keeps type, schema version, JSON data and metadata, and the Clock's time", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const data = {
              text: 'héllo 👋 \u0000 "quoted"',
              n: 2 ** 52,
              neg: -1.5,
              list: [1, null, { deep: [true] }],
              empty: {},
            }
            const metadata = { causation: "cmd-1", tags: ["x"] }
            yield* store
              .append("s", "no-stream", [
                { id: "e1", type: "Typed", version: 3, data, metadata },
                { id: "e2", type: "Plain", version: 1, data: "just a string" },
                { id: "e3", type: "Nulls", version: 1, data: null },
              ])
              .pipe(atTime(1_700_000_000_123))
            const [e1, e2, e3] = yield* store.read("s")
            expect(e1).toEqual({
              id: "e1",
              type: "Typed",
              version: 3,
              data,
              metadata,
              stream: "s",
              streamVersion: 1,
              position: 1,
              recordedAt: 1_700_000_000_123,
            })
            expect(e2).toMatchObject({ data: "just a string", metadata: null, version: 1 })
            expect(e3).toMatchObject({ data: null, metadata: null })
          }),
        ))

      it("stored data is a copy: mutating the appended object afterwards changes nothing", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const data = { list: [1] }
            yield* store.append("s", "any", [ev("a", data)])
            data.list.push(2)
            expect((yield* store.read("s"))[0]!.data).toEqual({ list: [1] })
          }),
        ))
    })

    describe("atomic batches and validation", () => {
      const malformed: ReadonlyArray<readonly [string, unknown, string]> = [
        ["an empty id", { id: "", type: "T", version: 1, data: 1 }, "events[1].id"],
        ["an empty type", { id: "x", type: "", version: 1, data: 1 }, "events[1].type"],
        ["version 0", { id: "x", type: "T", version: 0, data: 1 }, "events[1].version"],
        ["a fractional version", { id: "x", type: "T", version: 1.5, data: 1 }, "events[1].version"],
        ["undefined data", { id: "x", type: "T", version: 1 }, "events[1].data"],
        ["NaN deep in data", { id: "x", type: "T", version: 1, data: { a: [0, Number.NaN] } }, "events[1].data.a[1]"],
        ["a function in data", { id: "x", type: "T", version: 1, data: { f: () => 1 } }, "events[1].data.f"],
        ["a Date in data", { id: "x", type: "T", version: 1, data: { at: new Date(0) } }, "events[1].data.at"],
        [
          "a bigint in metadata",
          { id: "x", type: "T", version: 1, data: 1, metadata: { n: 1n } },
          "events[1].metadata.n",
        ],
        ["an undefined field", { id: "x", type: "T", version: 1, data: { gone: undefined } }, "events[1].data.gone"],
      ]
      for (const [what, bad, path] of malformed) {
        it(`a batch with ${what} fails with MalformedEvent at ${path}, and its valid events are not written`, () =>
          withStore(
            Effect.gen(function* () {
              const store = yield* EventStore
              const error = yield* failsAndWritesNothing(
                store.append("s", "any", [ev("first")]),
                store.append("s", "any", [ev("ok"), bad as NewEvent]),
              )
              expect(error).toMatchObject({ _tag: "MalformedEvent", path })
            }),
          ))
      }

      it("an invalid expected version (-1, 1.5, a typo) or an empty stream name fails with MalformedEvent", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            for (const expected of [-1, 1.5, Number.NaN, "no_stream"] as const) {
              const error = yield* failsAndWritesNothing(Effect.void, store.append("s", expected as never, [ev("a")]))
              expect(error).toMatchObject({ _tag: "MalformedEvent", path: "expectedVersion" })
            }
            const error = yield* Effect.flip(store.append("", "any", [ev("a")]))
            expect(error).toMatchObject({ _tag: "MalformedEvent", path: "stream" })
          }),
        ))

      it("a batch holding an already stored id fails with DuplicateEventId and writes none of its events", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const error = yield* failsAndWritesNothing(
              store.append("s", "any", [ev("a"), ev("b")]),
              store.append("t", "any", [ev("c"), ev("b")]),
            )
            expect(error).toMatchObject({ _tag: "DuplicateEventId", ids: ["b"] })
            expect(yield* store.read("t")).toEqual([])
          }),
        ))

      it("appending the same event again (a retried command) fails with DuplicateEventId: no duplicates", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "any", [ev("a")])
            const error = yield* Effect.flip(store.append("s", "any", [ev("a")]))
            expect(error._tag).toBe("DuplicateEventId")
            expect(ids(yield* all)).toEqual(["a"])
          }),
        ))

      it("a batch repeating an id within itself fails with DuplicateEventId", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const error = yield* failsAndWritesNothing(Effect.void, store.append("s", "any", [ev("a"), ev("a")]))
            expect(error).toMatchObject({ _tag: "DuplicateEventId", ids: ["a"] })
          }),
        ))

      it("a large batch (1200 events) is written whole, and one failing on its last event writes nothing", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const batch = Array.from({ length: 1200 }, (_, i) => ev(`big-${i}`, { i }))
            expect(yield* store.append("s", "no-stream", batch)).toEqual({ streamVersion: 1200, position: 1200 })
            const failing = [...Array.from({ length: 1199 }, (_, i) => ev(`next-${i}`)), ev("big-0")]
            const error = yield* failsAndWritesNothing(Effect.void, store.append("t", "any", failing))
            expect(error).toMatchObject({ _tag: "DuplicateEventId", ids: ["big-0"] })
            expect(yield* store.streamVersion("t")).toBe(0)
            const back = yield* store.read("s")
            expect(back.map((e) => (e.data as { i: number }).i)).toEqual(batch.map((_, i) => i))
          }),
        ))
    })

    describe("concurrency", () => {
      it("many fibers appending at the same expected version: exactly one winner per version, no duplicates", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const rounds = 6
            const fibers = 8
            for (let round = 0; round < rounds; round++) {
              const results = yield* Effect.all(
                Array.from({ length: fibers }, (_, f) =>
                  Effect.result(store.append("s", round, [ev(`r${round}-f${f}`)])),
                ),
                { concurrency: "unbounded" },
              )
              const won = results.filter(Result.isSuccess)
              expect(won.length).toBe(1)
              expect(won[0]!.success.streamVersion).toBe(round + 1)
              for (const lost of results.filter(Result.isFailure)) {
                expect(lost.failure).toMatchObject({ _tag: "WrongExpectedVersion", expected: round, actual: round + 1 })
              }
            }
            const stream = yield* store.read("s")
            expect(stream.map((e) => e.streamVersion)).toEqual([1, 2, 3, 4, 5, 6])
            expect(new Set(ids(stream)).size).toBe(rounds)
          }),
        ))

      it("retrying writers (read version, append exact, retry on conflict) lose nothing and duplicate nothing", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const writers = 8
            const each = 6
            let conflicts = 0
            const appendOne = (id: string): Effect.Effect<void, unknown> =>
              Effect.flatMap(store.streamVersion("s"), (version) =>
                store.append("s", version, [ev(id)]).pipe(
                  Effect.catchTag("WrongExpectedVersion", () => {
                    conflicts++
                    return appendOne(id)
                  }),
                  Effect.asVoid,
                ),
              )
            yield* Effect.all(
              Array.from({ length: writers }, (_, w) =>
                Effect.forEach(
                  Array.from({ length: each }, (_, i) => `w${w}-${i}`),
                  appendOne,
                  { discard: true },
                ),
              ),
              { concurrency: "unbounded" },
            )
            const stream = yield* store.read("s")
            expect(stream.map((e) => e.streamVersion)).toEqual(Array.from({ length: writers * each }, (_, i) => i + 1))
            const expected = Array.from({ length: writers }, (_, w) =>
              Array.from({ length: each }, (_, i) => `w${w}-${i}`),
            )
            expect(new Set(ids(stream))).toEqual(new Set(expected.flat()))
            // Each writer's own events are in its order.
            for (const mine of expected) expect(ids(stream).filter((id) => mine.includes(id))).toEqual(mine)
            expect(conflicts).toBeGreaterThanOrEqual(0)
          }),
        ))

      it("concurrent appends to different streams with any all succeed with distinct, ordered positions", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const results = yield* Effect.all(
              Array.from({ length: 40 }, (_, i) => store.append(`s${i % 5}`, "any", [ev(`e${i}-a`), ev(`e${i}-b`)])),
              { concurrency: "unbounded" },
            )
            expect(new Set(results.map((r) => r.position)).size).toBe(40)
            const log = yield* all
            expect(log.length).toBe(80)
            expect(log.map((e) => e.position)).toEqual([...log.map((e) => e.position)].sort((a, b) => a - b))
            for (let s = 0; s < 5; s++) {
              expect((yield* store.read(`s${s}`)).map((e) => e.streamVersion)).toEqual(
                Array.from({ length: 16 }, (_, i) => i + 1),
              )
            }
          }),
        ))
    })

    describe("readAll", () => {
      it("pages through the whole log in order for any page size, including exact multiples", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            for (let i = 0; i < 24; i++) yield* store.append(`s${i % 3}`, "any", [ev(`e${i}`)])
            const expected = Array.from({ length: 24 }, (_, i) => `e${i}`)
            for (const pageSize of [1, 4, 5, 24, 25, 1000]) {
              expect(ids(yield* Stream.runCollect(store.readAll({ pageSize })))).toEqual(expected)
            }
          }),
        ))

      it("starts after a position and is empty after the head", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append(
              "s",
              "any",
              Array.from({ length: 10 }, (_, i) => ev(`e${i}`)),
            )
            const log = yield* all
            const after = log[3]!.position
            expect(ids(yield* Stream.runCollect(store.readAll({ after, pageSize: 3 })))).toEqual(ids(log.slice(4)))
            expect(yield* Stream.runCollect(store.readAll({ after: log[9]!.position }))).toEqual([])
          }),
        ))

      it("reads lazily: taking the first events does not need the rest", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append(
              "s",
              "any",
              Array.from({ length: 50 }, (_, i) => ev(`e${i}`)),
            )
            const first = yield* Stream.runCollect(store.readAll({ pageSize: 7 }).pipe(Stream.take(3)))
            expect(ids(first)).toEqual(["e0", "e1", "e2"])
          }),
        ))
    })

    describe("subscribe", () => {
      it("catches up on existing events, then emits events appended later, in global order", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "any", [ev("a"), ev("b")])
            const fiber = yield* store.subscribe().pipe(Stream.take(5), Stream.runCollect, Effect.forkChild)
            yield* Effect.sleep("30 millis")
            yield* store.append("s", "any", [ev("c")])
            yield* store.append("t", "any", [ev("d"), ev("e")])
            const got = yield* Fiber.join(fiber).pipe(Effect.timeout("10 seconds"))
            expect(ids(got)).toEqual(["a", "b", "c", "d", "e"])
          }),
        ))

      it("starts after a position", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const first = yield* store.append("s", "any", [ev("a"), ev("b")])
            const fiber = yield* store
              .subscribe({ after: first.position })
              .pipe(Stream.take(1), Stream.runCollect, Effect.forkChild)
            yield* store.append("s", "any", [ev("c")])
            expect(ids(yield* Fiber.join(fiber).pipe(Effect.timeout("10 seconds")))).toEqual(["c"])
          }),
        ))

      it("sees appends made through another connection to the same store", () =>
        Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const handle = yield* Effect.promise(() => backend.fresh())
              const reader = yield* storeOf(handle.open())
              const writer = yield* storeOf(handle.open())
              const fiber = yield* reader.subscribe().pipe(Stream.take(3), Stream.runCollect, Effect.forkChild)
              yield* Effect.sleep("50 millis")
              yield* writer.append("s", "any", [ev("a")])
              yield* writer.append("s", "any", [ev("b"), ev("c")])
              expect(ids(yield* Fiber.join(fiber).pipe(Effect.timeout("10 seconds")))).toEqual(["a", "b", "c"])
            }),
          ),
        ))

      it("during concurrent appends it skips nothing and repeats nothing", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const writers = 4
            const each = 25
            const fiber = yield* store
              .subscribe()
              .pipe(Stream.take(writers * each), Stream.runCollect, Effect.forkChild)
            yield* Effect.all(
              Array.from({ length: writers }, (_, w) =>
                Effect.forEach(
                  Array.from({ length: each }, (_, i) => i),
                  (i) => store.append(`w${w}`, "any", [ev(`w${w}-${i}`)]),
                  { discard: true },
                ),
              ),
              { concurrency: "unbounded" },
            )
            const got = yield* Fiber.join(fiber).pipe(Effect.timeout("20 seconds"))
            const positions = got.map((e) => e.position)
            for (let i = 1; i < positions.length; i++) expect(positions[i]).toBeGreaterThan(positions[i - 1]!)
            expect(new Set(ids(got)).size).toBe(writers * each)
            expect(ids(got)).toEqual(ids(yield* all))
          }),
        ))
    })

    describe("crypto-shredding (sealed fields, forget)", () => {
      const SECRET = "the launch code is 0000-1234"
      const sealedEvent = (id: string, text = SECRET): NewEvent => ({
        ...ev(id, { note: text, tags: [text, "plain"], count: 3, nested: { deep: [text] }, open: "visible" }),
        sealed: [["note"], ["tags", "*"], ["nested"]],
      })
      const sealedData = {
        note: SECRET,
        tags: [SECRET, "plain"],
        count: 3,
        nested: { deep: [SECRET] },
        open: "visible",
      }

      it("given sealed fields, when read back (read, readAll, subscribe), then they are the plain values", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [sealedEvent("a"), ev("b")])
            expect((yield* store.read("s")).map((e) => e.data)).toEqual([sealedData, { id: "b" }])
            expect((yield* all).map((e) => e.data)).toEqual([sealedData, { id: "b" }])
            const first = yield* Stream.runCollect(Stream.take(store.subscribe(), 1))
            expect(first.map((e) => e.data)).toEqual([sealedData])
          }),
        ))

      it("given a forgotten stream, when read, then its sealed fields read as ERASED and everything else is unchanged", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [sealedEvent("a"), ev("b")])
            yield* store.append("other", "no-stream", [sealedEvent("c")])
            const before = yield* store.read("s")
            const forgotten = yield* store.forget("s")
            expect(forgotten.keyDeleted).toBe(true)
            const after = yield* store.read("s")
            const E = EventStore.ERASED
            expect(after).toEqual([
              { ...before[0], data: { note: E, tags: [E, E], count: 3, nested: { deep: [E] }, open: "visible" } },
              before[1],
            ])
            // Another stream's key is untouched.
            expect((yield* store.read("other"))[0]?.data).toEqual(sealedData)
            // Forgetting again finds no key, and changes nothing.
            expect((yield* store.forget("s")).keyDeleted).toBe(false)
            expect(yield* store.read("s")).toEqual(after)
          }),
        ))

      it("given forget with a marker, then the marker is appended with the key's deletion: a writer that read the stream before gets a version conflict", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [sealedEvent("a"), ev("b")])
            const forgotten = yield* store.forget("s", { marker: ev("m", { forgotten: true }) })
            expect(forgotten).toMatchObject({ keyDeleted: true, version: 3 })
            const after = yield* store.read("s")
            expect(after.map((e) => [e.id, e.streamVersion])).toEqual([
              ["a", 1],
              ["b", 2],
              ["m", 3],
            ])
            expect((after[0]!.data as { note: string }).note).toBe(EventStore.ERASED)
            const stale = yield* Effect.flip(store.append("s", 2, [sealedEvent("late")]))
            expect(stale._tag).toBe("WrongExpectedVersion")
            // Without a marker the stream is unchanged.
            yield* store.append("t", "no-stream", [sealedEvent("c")])
            expect((yield* store.forget("t")).version).toBeUndefined()
            expect(yield* store.streamVersion("t")).toBe(1)
          }),
        ))

      it("given forget with a marker and `erasable`, when repeated with no erasable event since, then it does nothing; after new text it erases it and marks again", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const marker = (id: string) => ev(id, {}, "Forgotten")
            const forget = (id: string) =>
              store.forget("s", { marker: marker(id), erasable: (type) => type === "Tested" })
            const versions = Effect.map(store.read("s"), (events) => events.map((e) => [e.id, e.type]))
            // Nothing erasable ever, but never forgotten: the first forget marks.
            yield* store.append("s", "no-stream", [ev("quiet", {}, "Quiet")])
            expect(yield* forget("m1")).toMatchObject({ alreadyForgotten: false, version: 2 })
            yield* store.append("s", 2, [sealedEvent("a")])
            expect(yield* forget("m2")).toMatchObject({ alreadyForgotten: false, keyDeleted: true, version: 4 })
            const marked = yield* versions
            // Again, and again after an event that holds no text: nothing deleted, nothing appended.
            expect(yield* forget("m3")).toEqual({ keyDeleted: false, logCleared: true, alreadyForgotten: true })
            yield* store.append("s", 4, [ev("quiet2", {}, "Quiet")])
            expect((yield* forget("m4")).alreadyForgotten).toBe(true)
            expect(yield* versions).toEqual([...marked, ["quiet2", "Quiet"]])
            // New text since the last marker: erased, and marked.
            yield* store.append("s", 5, [sealedEvent("b", "new text")])
            expect(yield* forget("m5")).toMatchObject({ alreadyForgotten: false, keyDeleted: true, version: 7 })
            expect(((yield* store.read("s", { from: 6, to: 6 }))[0]!.data as { note: string }).note).toBe(
              EventStore.ERASED,
            )
            expect((yield* forget("m6")).alreadyForgotten).toBe(true)
            expect(yield* store.streamVersion("s")).toBe(7)
            // A key made since (a sealed field on a type the caller calls text-free) is still deleted.
            yield* store.append("s", 7, [{ ...sealedEvent("c"), type: "Quiet" }])
            expect(yield* forget("m7")).toMatchObject({ alreadyForgotten: false, keyDeleted: true, version: 9 })
            // Without `erasable` every forget marks.
            expect(yield* store.forget("s", { marker: marker("m8") })).toMatchObject({
              alreadyForgotten: false,
              version: 10,
            })
          }),
        ))

      it("isSealed says whether a stream has a key; readType gives one type's events across streams in global order", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [sealedEvent("a"), ev("b", { id: "b" }, "Other")])
            yield* store.append("t", "no-stream", [ev("c")])
            yield* store.append("s", 2, [ev("d")])
            expect([yield* store.isSealed("s"), yield* store.isSealed("t"), yield* store.isSealed("none")]).toEqual([
              true,
              false,
              false,
            ])
            const tested = yield* store.readType("Tested")
            expect(tested.map((e) => [e.id, e.stream])).toEqual([
              ["a", "s"],
              ["c", "t"],
              ["d", "s"],
            ])
            expect(tested[0]!.data).toEqual(sealedData) // opened like any read
            expect(yield* store.readType("Missing")).toEqual([])
            yield* store.forget("s")
            expect(yield* store.isSealed("s")).toBe(false)
          }),
        ))

      it("given a forgotten stream, when it gets a new sealed event, then a new key seals it and the old fields stay erased", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [sealedEvent("a")])
            yield* store.forget("s")
            yield* store.append("s", 1, [sealedEvent("b", "new text")])
            const data = (yield* store.read("s")).map((e) => (e.data as { note: string }).note)
            expect(data).toEqual([EventStore.ERASED, "new text"])
          }),
        ))

      it("given sealed paths that match no string, or empty strings, then no key is made and forget finds none", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [
              { ...ev("a", { note: "", count: 1 }), sealed: [["note"], ["missing", "*"]] },
            ])
            expect((yield* store.read("s"))[0]?.data).toEqual({ note: "", count: 1 })
            expect((yield* store.forget("s")).keyDeleted).toBe(false)
          }),
        ))

      it("given sealed paths that are not lists of strings, then MalformedEvent and nothing is written", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            const bad = { ...ev("a"), sealed: [["note", 3]] } as unknown as NewEvent
            const error = yield* failsAndWritesNothing(Effect.void, store.append("s", "any", [bad]))
            expect(error._tag).toBe("MalformedEvent")
          }),
        ))
    })

    describe("snapshots", () => {
      it("given snapshots written, then the latest of each stream is read back with its checksum; other streams have none", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            expect(yield* store.readSnapshot("s")).toBeUndefined()
            yield* atTime(1_000)(store.writeSnapshot("s", { version: 3, format: "f/1", data: '{"a":1}' }))
            yield* atTime(2_000)(store.writeSnapshot("s", { version: 7, format: "f/2", data: '{"a":2}' }))
            yield* store.writeSnapshot("t", { version: 1, format: "f/1", data: "[]" })
            const latest = yield* store.readSnapshot("s")
            expect(latest).toEqual({
              stream: "s",
              version: 7,
              format: "f/2",
              data: '{"a":2}',
              checksum: Snapshot.checksum('{"a":2}'),
              recordedAt: 2_000,
            })
            expect(Snapshot.intact(latest!)).toBe(true)
            expect(Snapshot.intact({ ...latest!, data: '{"a":3}' })).toBe(false)
            expect((yield* store.readSnapshot("t"))?.version).toBe(1)
            expect(yield* store.readSnapshot("u")).toBeUndefined()
          }),
        ))

      it("given a forgotten stream, then its snapshot is gone and other streams keep theirs", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [{ ...ev("a", { note: "secret" }), sealed: [["note"]] }])
            yield* store.writeSnapshot("s", { version: 1, format: "f/1", data: '{"note":"secret"}' })
            yield* store.writeSnapshot("t", { version: 1, format: "f/1", data: "{}" })
            yield* store.forget("s")
            expect(yield* store.readSnapshot("s")).toBeUndefined()
            expect(yield* store.readSnapshot("t")).toBeDefined()
          }),
        ))

      it("given a snapshot with `unlessAfter`, then it is not written over a marker after its version, and is written otherwise", () =>
        withStore(
          Effect.gen(function* () {
            const store = yield* EventStore
            yield* store.append("s", "no-stream", [{ ...ev("a", { note: "secret" }), sealed: [["note"]] }, ev("b")])
            // Folded at version 2, written after a forget whose marker is version 3: not written.
            yield* store.forget("s", { marker: ev("m", {}, "Forgotten") })
            yield* store.writeSnapshot("s", {
              version: 2,
              format: "f/1",
              data: '{"note":"secret"}',
              unlessAfter: "Forgotten",
            })
            expect(yield* store.readSnapshot("s")).toBeUndefined()
            // Events of other types after it do not hold it back; at or after the marker it is written.
            yield* store.writeSnapshot("s", { version: 3, format: "f/1", data: "{}", unlessAfter: "Tested" })
            expect((yield* store.readSnapshot("s"))?.version).toBe(3)
            yield* store.append("s", 3, [ev("c")])
            yield* store.writeSnapshot("s", { version: 4, format: "f/1", data: '{"v":4}', unlessAfter: "Forgotten" })
            const stored = yield* store.readSnapshot("s")
            expect(stored).toMatchObject({ version: 4, data: '{"v":4}' })
            expect(stored).not.toHaveProperty("unlessAfter")
            // Refused: the snapshot already stored stays.
            yield* store.writeSnapshot("s", { version: 1, format: "f/1", data: "{}", unlessAfter: "Tested" })
            expect((yield* store.readSnapshot("s"))?.version).toBe(4)
          }),
        ))
    })
  })
}
