/**
 * The prune index: every tool output cleared from the model input, when, by which event, and how many tokens it
 * freed. The outputs themselves stay in the log; this says where to find them.
 */
import type { Event } from "./Events.ts"
import type { MessageId, PartId } from "./Ids.ts"
import type { Projection } from "./Projection.ts"

/** One pruned output. */
export interface Entry {
  readonly messageId: MessageId
  readonly partId: PartId
  readonly tokens: number
  readonly at: number
  readonly eventId: string
  readonly version: number
}

/** All pruned outputs, oldest prune first. */
export interface State {
  readonly entries: ReadonlyArray<Entry>
  readonly tokensFreed: number
}

/** Nothing pruned. */
export const initial: State = { entries: [], tokensFreed: 0 }

/** The prune-index projection. */
export const projection: Projection<State> = {
  name: "prune-index",
  version: 1,
  initial,
  evolve: (state, event: Event, meta) =>
    event._tag !== "PartCompacted"
      ? state
      : {
          entries: [
            ...state.entries,
            {
              messageId: event.messageId,
              partId: event.partId,
              tokens: event.tokens,
              at: event.at,
              eventId: meta.id,
              version: meta.version,
            },
          ],
          tokensFreed: state.tokensFreed + event.tokens,
        },
}
