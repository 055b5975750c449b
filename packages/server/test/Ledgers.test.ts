// The viewer's ledgers (issue 32): folded in slices that let other work run (a fresh server answers its pages while it
// folds a long session's ledger), once for requests that arrive together, caught up with only the new events as the
// session grows — and always equal to the fold of the whole log (`Ledgers.ledgerOf`, the reference).
import type { Ledger } from "@pivot/core"
import { Catalog, Ledgers } from "@pivot/server"
import { EventStore, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { play } from "./support/play.ts"

const SESSION = "ses_ledgers"
const events = play({ sessionId: SESSION, turns: 400, compactEvery: 25, pruneEvery: 5 })
const log = SessionLog.fromEvents(SESSION, events)
const priceOf: Ledger.PriceOf = () => ({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })

const append = (from: number, to: number) =>
  SessionLog.append(
    SESSION,
    from === 0 ? "no-stream" : from,
    log.slice(from, to).map(({ event, meta }) => ({ id: meta.id, event })),
  )

const withCatalog = <A, E>(f: (catalog: Catalog.CatalogShape) => Effect.Effect<A, E, EventStore>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const catalog = yield* Catalog.make(yield* EventStore, Effect.succeed([{ sessionId: SESSION }]))
      return yield* f(catalog)
    }).pipe(Effect.provide(EventStore.layerMemory())),
  )

const plain = (value: unknown) => JSON.parse(JSON.stringify(value))

describe("Ledgers", () => {
  it("the played session is long enough to fold in several slices", () => {
    expect(log.length).toBeGreaterThan(2 * Ledgers.SLICE)
  })

  it("folds a long log in slices: another fiber runs before the fold ends, and the answer equals the fold", async () => {
    const out = await withCatalog((catalog) =>
      Effect.gen(function* () {
        yield* append(0, log.length)
        const loaded = yield* catalog.session(SESSION)
        const ledgers = Ledgers.make(catalog, priceOf)
        let folded = false
        const fold = Effect.tap(ledgers.of(loaded), () =>
          Effect.sync(() => {
            folded = true
          }),
        )
        // Another request's work: it runs after one yield of its own, while the fold still has slices to go.
        const other = Effect.andThen(
          Effect.yieldNow,
          Effect.sync(() => folded),
        )
        const [served, foldedWhenOtherRan] = yield* Effect.all([fold, other], { concurrency: "unbounded" })
        return { served, foldedWhenOtherRan }
      }),
    )
    expect(out.foldedWhenOtherRan).toBe(false)
    expect(out.served.source).toBe("log")
    expect(out.served.version).toBe(log.length)
    expect(plain(out.served.view)).toEqual(plain(Ledgers.ledgerOf(log, priceOf)))
  })

  it("answers requests that arrive together with one fold", async () => {
    const [a, b, c] = await withCatalog((catalog) =>
      Effect.gen(function* () {
        yield* append(0, log.length)
        const loaded = yield* catalog.session(SESSION)
        const ledgers = Ledgers.make(catalog, priceOf)
        return yield* Effect.all([ledgers.of(loaded), ledgers.of(loaded), ledgers.of(loaded)], {
          concurrency: "unbounded",
        })
      }),
    )
    expect(b).toBe(a)
    expect(c).toBe(a)
  })

  it("catches up with the new events only, equal to the fold of the whole log, also when a prune runs across the cut", async () => {
    // Cut inside a prune's run of `PartCompacted` events: the answer at the cut settles the open prune, the state
    // caught up from it must not have.
    const cut =
      events.findIndex((e, i) => i > 300 && e._tag === "PartCompacted" && events[i + 1]?._tag === "PartCompacted") + 1
    expect(cut).toBeGreaterThan(300)
    const out = await withCatalog((catalog) =>
      Effect.gen(function* () {
        const ledgers = Ledgers.make(catalog, priceOf)
        yield* append(0, cut)
        const first = yield* ledgers.of(yield* catalog.session(SESSION))
        yield* append(cut, log.length)
        const second = yield* ledgers.of(yield* catalog.session(SESSION))
        return { first, second }
      }),
    )
    expect(out.first.version).toBe(cut)
    expect(plain(out.first.view)).toEqual(plain(Ledgers.ledgerOf(log.slice(0, cut), priceOf)))
    expect(out.second.version).toBe(log.length)
    expect(plain(out.second.view)).toEqual(plain(Ledgers.ledgerOf(log, priceOf)))
  })

  it("warms a session's ledger ahead of the first request: the request gets the answer the warm made", async () => {
    const out = await withCatalog((catalog) =>
      Effect.gen(function* () {
        yield* append(0, log.length)
        const ledgers = Ledgers.make(catalog, priceOf)
        yield* ledgers.warm([SESSION, "ses_not_there"])
        const loaded = yield* catalog.session(SESSION)
        const warmed = yield* ledgers.of(loaded)
        return { warmed, again: yield* ledgers.of(loaded) }
      }),
    )
    expect(out.again).toBe(out.warmed)
    expect(plain(out.warmed.view)).toEqual(plain(Ledgers.ledgerOf(log, priceOf)))
  })
})
