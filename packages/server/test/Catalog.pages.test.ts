/**
 * The catalog's first fold of a session goes a page of events at a time (`Catalog.PAGE`), giving the event loop back
 * between pages: what it holds after must be what one fold of the whole log gives, at the pages' edges, and caught up
 * with the store when the session moves on (a view that is not would serve a stale timeline and stale figures).
 */
import { Events } from "@pivot/core"
import { EventStore, type EventStoreShape, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Catalog, SessionView } from "../src/index.ts"
import { play } from "./support/play.ts"

const SESSION = "ses_catalog_pages"
const PAGE = Catalog.PAGE
// About 4.1 events a turn: enough for the largest count below.
const played = play({ sessionId: SESSION, turns: Math.ceil((2 * PAGE + 10) / 4), compactEvery: 25, pruneEvery: 5 })
const logged = SessionLog.fromEvents(SESSION, played)

const append = (from: number, to: number) =>
  SessionLog.append(
    SESSION,
    from === 0 ? "no-stream" : from,
    logged.slice(from, to).map(({ event, meta }) => ({ id: meta.id, event })),
  )

/** Everything a view holds, comparable with `toEqual` (its maps as entries). */
const shapeOf = (view: SessionView.State) => ({
  ...view,
  byType: [...view.byType],
  added: [...view.added],
  tails: [...view.tails],
  pinned: [...view.pinned],
  summary: SessionView.summary(view),
})

/** The reference: the whole log read in one go, decoded and folded event by event. */
const reference = (store: EventStoreShape) =>
  Effect.gen(function* () {
    const recorded = yield* store.read(Events.streamName(SESSION))
    const log = yield* Effect.fromResult(SessionLog.decodeAll(recorded))
    const view = SessionView.make(SESSION)
    for (const { event, meta } of log) SessionView.evolve(view, event, meta)
    return { view: shapeOf(view), log, position: recorded[recorded.length - 1]!.position }
  })

const run = <A, E>(effect: Effect.Effect<A, E, EventStore>) =>
  Effect.runPromise(effect.pipe(Effect.provide(EventStore.layerMemory())))

describe("the catalog's first fold, a page at a time", () => {
  it.each([PAGE - 1, PAGE, PAGE + 1, 2 * PAGE + 1])(
    "given a session of %i events, when it is first asked for, then it holds what one fold of the whole log gives",
    async (count) => {
      const out = await run(
        Effect.gen(function* () {
          const store = yield* EventStore
          yield* append(0, count)
          const catalog = yield* Catalog.make(store, Effect.succeed([{ sessionId: SESSION }]))
          const loaded = yield* catalog.session(SESSION)
          return {
            got: { view: shapeOf(loaded.view), log: loaded.log, position: loaded.position },
            want: yield* reference(store),
          }
        }),
      )
      expect(out.got.view.version).toBe(count) // the control: every event was folded
      expect(out.got).toEqual(out.want)
    },
  )

  it("given a session folded over two pages, when it moves on by more than a page, then its view is caught up with the store, not stale", async () => {
    const out = await run(
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* append(0, PAGE + 1)
        const catalog = yield* Catalog.make(store, Effect.succeed([{ sessionId: SESSION }]))
        const first = yield* catalog.session(SESSION)
        const held = { version: first.view.version, steps: first.view.steps.length }
        yield* append(PAGE + 1, 2 * PAGE + 3)
        const second = yield* catalog.session(SESSION)
        return {
          held,
          sameView: second.view === first.view,
          got: { view: shapeOf(second.view), log: second.log, position: second.position },
          want: yield* reference(store),
        }
      }),
    )
    expect(out.held.version).toBe(PAGE + 1)
    // Caught up with the new events only: the same view, moved on.
    expect(out.sameView).toBe(true)
    expect(out.got.view.version).toBe(2 * PAGE + 3)
    expect(out.got.view.steps.length).toBeGreaterThan(out.held.steps)
    expect(out.got).toEqual(out.want)
  })

  it("given a session folded over two pages, when it is forgotten, then it is folded again from its first event", async () => {
    const out = await run(
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* append(0, PAGE + 1)
        const catalog = yield* Catalog.make(store, Effect.succeed([{ sessionId: SESSION }]))
        const first = yield* catalog.session(SESSION)
        yield* SessionLog.forget(SESSION)
        const second = yield* catalog.session(SESSION)
        return {
          sameView: second.view === first.view,
          got: { view: shapeOf(second.view), log: second.log, position: second.position },
          want: yield* reference(store),
        }
      }),
    )
    expect(out.sameView).toBe(false)
    expect(out.got).toEqual(out.want)
  })

  it.each([
    [PAGE, false],
    [PAGE + 1, true],
  ] as const)(
    "given a session of %i events, when it is first folded, then a task queued before lets through the event loop in between: %s",
    async (count, between) => {
      const order = await run(
        Effect.gen(function* () {
          const store = yield* EventStore
          yield* append(0, count)
          const catalog = yield* Catalog.make(store, Effect.succeed([{ sessionId: SESSION }]))
          const seen: Array<string> = []
          setImmediate(() => seen.push("a task of the event loop"))
          yield* Effect.promise(() => Effect.runPromise(catalog.session(SESSION)))
          seen.push("the session folded")
          yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
          return seen
        }),
      )
      expect(order).toEqual(
        between
          ? ["a task of the event loop", "the session folded"]
          : ["the session folded", "a task of the event loop"],
      )
    },
  )
})
