/**
 * The cost ledger as a built-in async projection, one state per session (ADR 0018, "The ledger"). Unlike the inline
 * read models it never runs in an append's transaction: its fold renders and serialises the window at every call,
 * which appends and bulk imports should not pay for. Its state is the ledger folded without prices (`Ledger.evolve`
 * with none): every token figure the log decides, the window it folds alongside, and the stream version it covers.
 * Prices are the reader's (catalog, defaults, the user's overrides): `priced` applies them with `Ledger.price`.
 */
import { Ledger, type Projection } from "@pivot/core"
import * as Projections from "../projections/Projections.ts"

/** The projection's name (reserved: a user's projection may not take it). */
export const NAME = "ledger"

/** The ledger state's version: bump it whenever `Ledger.evolve` or `Ledger.Encoded` changes. */
export const VERSION = 2

/** What is stored per session: the stream version covered and the unpriced ledger. */
export interface Encoded {
  readonly version: number
  readonly ledger: Ledger.Encoded
}

/**
 * The state between events: the decoded ledger, encoded only when the projector stores it (`toJSON`), so a batch of
 * a session's events decodes the stored state once and encodes it once.
 */
export interface Held {
  readonly version: number
  readonly toJSON: () => Encoded
}

/** A state as the projector hands it over: held from the previous event, or as parsed from its stored JSON. */
export type State = Held | Encoded

const held = new WeakMap<object, Ledger.State>()

const hold = (version: number, state: Ledger.State): Held => {
  const out: Held = { version, toJSON: () => ({ version, ledger: Ledger.encode(state) }) }
  held.set(out, state)
  return out
}

/** The unpriced ledger of a state. */
export const ledgerOf = (state: State): Ledger.State => held.get(state) ?? Ledger.decode((state as Encoded).ledger)

/** The projection: `Ledger.evolve` without prices, at each event's stream version. */
export const projection: Projection.Projection<State> = {
  name: NAME,
  version: VERSION,
  initial: hold(0, Ledger.initial),
  evolve: (state, event, meta) => hold(meta.version, Ledger.evolve(ledgerOf(state), event, meta.version)),
}

/** Its registration: async (appends and imports pay nothing for it), keyed per session. */
export const definition = Projections.async(projection, { scope: "session" })

/**
 * A session's ledger from the projection's stored state (`Projections.stored`), priced at `priceOf` and settled; or
 * `undefined` when the state is of another version or does not cover the session's head yet (read the log then).
 */
export const priced = (
  stored: { readonly version: number; readonly state: unknown } | undefined,
  head: number,
  priceOf: Ledger.PriceOf,
): Ledger.State | undefined => {
  if (stored === undefined || stored.version !== VERSION) return undefined
  const state = stored.state as Encoded | null
  if (state === null || typeof state !== "object" || state.version !== head) return undefined
  return Ledger.price(Ledger.settle(Ledger.decode(state.ledger)), priceOf)
}
