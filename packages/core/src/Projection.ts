/**
 * A projection is a named, versioned, pure fold over a session's events: the read side's unit. The window, usage,
 * the compaction history, the prune index and the audit view are projections; plugins add their own.
 */
import type { Event } from "./Events.ts"

/** Where an event sits in its stream: its id and stream version (1 for the first event). */
export interface EventMeta {
  readonly id: string
  readonly version: number
}

/** A named, versioned fold. Bump `version` when `evolve` changes, so stored read models are rebuilt. */
export interface Projection<S> {
  readonly name: string
  readonly version: number
  readonly initial: S
  readonly evolve: (state: S, event: Event, meta: EventMeta) => S
}

/** Folds events (with their metadata) from the projection's initial state, or from `from`. */
export const fold = <S>(
  projection: Projection<S>,
  events: Iterable<{ readonly event: Event; readonly meta: EventMeta }>,
  from: S = projection.initial,
): S => {
  let state = from
  for (const { event, meta } of events) state = projection.evolve(state, event, meta)
  return state
}

/** Pairs bare events with metadata numbered from 1 (for tests and in-memory logs). */
export const withMeta = (events: Iterable<Event>, idOf: (index: number) => string = (i) => `event-${i}`) =>
  Array.from(events, (event, index) => ({ event, meta: { id: idOf(index + 1), version: index + 1 } }))
