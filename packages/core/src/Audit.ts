/**
 * The audit view: for every message the model sees, the events it came from — the event that added it and every
 * later event that changed what it shows (a tool result, a prune, the tail start written on a marker, the summary
 * that made it part of a pivot).
 */
import type { Event } from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import { PersistentMap } from "./internal/PersistentMap.ts"
import type { Projection } from "./Projection.ts"
import * as Window from "./Window.ts"

/** Event ids per message, next to the window they explain. */
export interface State {
  readonly window: Window.State
  readonly sources: PersistentMap<MessageId, ReadonlyArray<string>>
}

/** Before any event. */
export const initial: State = { window: Window.initial, sources: PersistentMap.empty() }

const touched = (event: Event): ReadonlyArray<MessageId> => {
  switch (event._tag) {
    case "UserMessageAdded":
    case "AssistantStepRecorded":
    case "ProviderErrorReported":
    case "TurnReplayed":
    case "ContinueRequested":
      return [event.message.id]
    case "CompactionRequested":
      return [event.marker.id]
    case "SummaryFinished":
    case "SummaryFailed":
      return [event.summary.id, event.markerId]
    case "CompactionStarted":
      return [event.markerId]
    case "ToolResultRecorded":
    case "PartCompacted":
      return [event.messageId]
    default:
      return []
  }
}

/** The audit projection. */
export const projection: Projection<State> = {
  name: "audit",
  version: 1,
  initial,
  evolve: (state, event, meta) => {
    let sources = state.sources
    for (const id of touched(event)) sources = sources.set(id, [...(sources.get(id) ?? []), meta.id])
    return { window: Window.evolve(state.window, event), sources }
  },
}

/** Each visible message, in model order, with the ids of the events it came from. */
export const entries = (state: State) =>
  Window.messages(state.window).map((message) => ({ message, eventIds: state.sources.get(message.id) ?? [] }))

/** The event ids of each message the window holds, in recorded order (what a snapshot of the audit view keeps). */
export const heldSources = (state: State): Array<readonly [MessageId, ReadonlyArray<string>]> => {
  const order = state.window.conversation.order
  const out: Array<readonly [MessageId, ReadonlyArray<string>]> = []
  for (let i = 0; i < order.length; i++) {
    const id = order.buffer[i]!
    const ids = state.sources.get(id)
    if (ids !== undefined) out.push([id, ids])
  }
  return out
}

/** The audit view of a window and the event ids of its messages (a snapshot's). */
export const restore = (
  window: Window.State,
  sources: Iterable<readonly [MessageId, ReadonlyArray<string>]>,
): State => ({
  window,
  sources: PersistentMap.fromEntries(sources),
})
