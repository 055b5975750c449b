/**
 * The ledger of live sessions, for the HUD's cost line: each session's `Ledger.State` kept with the stream version it
 * stands at, and caught up from the log (only the events after it) when asked at a newer version. The ledger is a
 * fold, so this is the same figure `pivot inspect` and the viewer compute from the whole log at that version.
 */
import { type Events, Ledger } from "@pivot/core"
import { Effect } from "effect"
import type { SessionsShape } from "./Sessions.ts"

/** Sessions whose ledger is kept; the oldest asked is dropped beyond it (and folded again if asked later). */
const MAX_SESSIONS = 1_000

/** The settled ledger of a session at stream version `version`. */
export const make = (sessions: SessionsShape, priceOf: Ledger.PriceOf) => {
  const kept = new Map<string, { readonly version: number; readonly state: Ledger.State }>()
  const foldFrom = (state: Ledger.State, from: number, events: ReadonlyArray<Events.Event>) => {
    let out = state
    events.forEach((event, i) => {
      out = Ledger.evolve(out, event, from + i + 1, priceOf)
    })
    return out
  }
  return (sessionId: string, version: number) =>
    Effect.gen(function* () {
      const known = kept.get(sessionId)
      // A state ahead of the asked version (a log read elsewhere) cannot go back: fold from the start.
      const base = known !== undefined && known.version <= version ? known : { version: 0, state: Ledger.initial }
      let state = base.state
      let at = base.version
      if (at < version) {
        const events = yield* sessions.events(sessionId, { from: at + 1, to: version })
        if (at > 0 && events.some((e) => e._tag === "SessionForgotten")) {
          // Forgotten since: the kept state holds text the erasure took away; fold the log again from its start.
          const all = yield* sessions.events(sessionId, { to: version })
          state = foldFrom(Ledger.initial, 0, all)
          at = all.length
        } else {
          state = foldFrom(state, at, events)
          at += events.length
        }
      }
      kept.delete(sessionId)
      kept.set(sessionId, { version: at, state })
      if (kept.size > MAX_SESSIONS) kept.delete(kept.keys().next().value!)
      return Ledger.settle(state)
    })
}
