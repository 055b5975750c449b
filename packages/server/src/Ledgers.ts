/**
 * Each session's ledger as the viewer serves it: the store's ledger projection when it covers the session's head
 * (priced at the server's prices), else the fold of the session's log the catalog holds in memory. At 100k events the
 * fold is seconds of CPU, so it is done without holding the server up:
 * - in slices of `SLICE` events, giving the event loop back between them: pages, the timeline and the other API
 *   routes are answered meanwhile (the session page draws them first and fills its ledger in when it arrives);
 * - once per session: a request that finds a fold under way waits for it instead of folding again;
 * - incrementally: when the session moves on, only the new events are folded into the unsettled state kept from the
 *   last answer (`Ledger.settle` makes each answer, and leaves the state it settles as it was);
 * - ahead of the first page: `warm` folds the recently used sessions' ledgers right after the catalog has read them.
 */
import { type Events, Ledger } from "@pivot/core"
import { ReadModels } from "@pivot/store"
import { Effect, Option, Semaphore } from "effect"
import type { CatalogShape, Loaded } from "./Catalog.ts"
import type * as LedgerView from "./LedgerView.ts"
import type * as SessionView from "./SessionView.ts"

/** Events folded between two yields to the event loop (a few milliseconds of CPU on a quiet machine). */
export const SLICE = 500

/** A session's ledger at a head, with the JSON answers made of it (by route). */
export interface Served {
  readonly version: number
  readonly source: "projection" | "log"
  readonly view: LedgerView.View
  readonly bodies: Map<string, string>
}

/** The ledger's answer for a settled state: its totals, entries and calls. */
export const viewOf = (state: Ledger.State): LedgerView.View => ({
  totals: Ledger.totals(state),
  entries: Ledger.entries(state),
  calls: Ledger.calls(state),
})

/** The ledger of a loaded log in one go (`Ledger.evolve` at each event's stream version), settled: the reference. */
export const ledgerOf = (
  log: ReadonlyArray<{ readonly event: Events.Event; readonly meta: { readonly version: number } }>,
  priceOf: Ledger.PriceOf = () => undefined,
): LedgerView.View => {
  let state = Ledger.initial
  for (const { event, meta } of log) state = Ledger.evolve(state, event, meta.version, priceOf)
  return viewOf(Ledger.settle(state))
}

/** What is kept per session view: the answer, and for a fold the unsettled state and how much of the log it took. */
interface Held {
  readonly served: Served
  /** The fold's state before settling (undefined for the projection's answer) and the log entries it folded. */
  readonly folded: { readonly state: Ledger.State; readonly count: number } | undefined
}

/** The ledgers of a server's sessions. */
export interface LedgersShape {
  /** The session's ledger at its head as loaded (folded or caught up when needed; never twice at once). */
  readonly of: (loaded: Loaded) => Effect.Effect<Served>
  /** Folds the ledgers of `sessionIds` ahead of the first page (failures are left to the pages). */
  readonly warm: (sessionIds: ReadonlyArray<string>) => Effect.Effect<void>
}

/** The ledgers over a catalog, priced at `priceOf` (default: each provider's default cache multipliers). */
export const make = (catalog: CatalogShape, priceOf: Ledger.PriceOf = () => undefined): LedgersShape => {
  // Keyed by the catalog's view of a session: a session folded again from zero (dropped, forgotten) is a new view.
  const held = new WeakMap<SessionView.State, Held>()
  const locks = new WeakMap<SessionView.State, Semaphore.Semaphore>()
  const lockOf = (view: SessionView.State) => {
    let lock = locks.get(view)
    if (lock === undefined) {
      lock = Semaphore.makeUnsafe(1)
      locks.set(view, lock)
    }
    return lock
  }

  /** Folds `log[from..to)` into `state`, a slice at a time. */
  const foldSlices = (state: Ledger.State, log: ReadonlyArray<Loaded["log"][number]>, from: number, to: number) =>
    Effect.gen(function* () {
      let out = state
      for (let i = from; i < to; i += SLICE) {
        const end = Math.min(to, i + SLICE)
        for (let j = i; j < end; j++) out = Ledger.evolve(out, log[j]!.event, log[j]!.meta.version, priceOf)
        if (end < to) yield* Effect.yieldNow
      }
      return out
    })

  const catchUp = (loaded: Loaded) =>
    Effect.gen(function* () {
      const { view, log } = loaded
      // The head and the log's length as one moment (the catalog appends to both together, without yielding).
      const head = view.version
      const count = log.length
      const known = held.get(view)
      if (known !== undefined && known.served.version === head) return known.served
      if (known?.folded === undefined) {
        // The projection's state when it covers the head (a store whose writer keeps it), else the log's fold.
        const stored = yield* Effect.option(catalog.projection(ReadModels.ledger.NAME, loaded.sessionId))
        const projected = ReadModels.ledger.priced(Option.getOrUndefined(stored), head, priceOf)
        if (projected !== undefined) {
          const served: Served = { version: head, source: "projection", view: viewOf(projected), bodies: new Map() }
          held.set(view, { served, folded: undefined })
          return served
        }
      }
      const base = known?.folded ?? { state: Ledger.initial, count: 0 }
      const state = yield* foldSlices(base.state, log, base.count, count)
      const served: Served = { version: head, source: "log", view: viewOf(Ledger.settle(state)), bodies: new Map() }
      held.set(view, { served, folded: { state, count } })
      return served
    })

  const of = (loaded: Loaded) => lockOf(loaded.view).withPermit(catchUp(loaded))

  const warm = (sessionIds: ReadonlyArray<string>) =>
    Effect.forEach(sessionIds, (sessionId) => catalog.session(sessionId).pipe(Effect.flatMap(of), Effect.ignore)).pipe(
      Effect.asVoid,
    )

  return { of, warm }
}
