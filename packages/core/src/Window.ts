/**
 * The model-input window as a projection: which stored messages the next model call sees, in which order. A pure,
 * incremental fold over the session's events (each event costs O(1) on the newest state; a pivot costs O(kept tail)).
 *
 * Pivot semantics follow OpenCode (spec §2.11) with its defects fixed:
 * - only a finished, error-free summary forms a pivot; the window becomes
 *   `[marker, summary, …kept tail…, …messages after the marker…]`;
 * - the kept tail is the exact list recorded when the compaction started, so it never contains an older marker or
 *   summary (OpenCode can show two summaries at once) nor the turn that overflowed (OpenCode can keep it in the tail
 *   and replay it too);
 * - a failed summary changes nothing (in OpenCode its tail can hide the previous good pivot).
 */
import { HashMap, Option } from "effect"
import * as Conversation from "./Conversation.ts"
import type { CompactionPlan, Event } from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import * as Seq from "./internal/Seq.ts"
import type { Message } from "./Message.ts"
import type { Projection } from "./Projection.ts"
import * as Render from "./Render.ts"

/** The latest pivot: the marker and summary that start the window. */
export interface Pivot {
  readonly markerId: MessageId
  readonly summaryId: MessageId
}

/** The window's state. */
export interface State {
  readonly conversation: Conversation.State
  /** Ids of the messages the model sees, in the order it sees them. */
  readonly visible: Seq.Seq<MessageId>
  /** Plans of started compactions, by marker: a finished summary applies its plan's tail. */
  readonly plans: HashMap.HashMap<MessageId, CompactionPlan>
  readonly pivot: Pivot | undefined
}

/** The window of an empty session. */
export const initial: State = {
  conversation: Conversation.initial,
  visible: Seq.empty(),
  plans: HashMap.empty(),
  pivot: undefined,
}

/** Ids visible after the marker (the marker is near the end, so this scans only the newest entries). */
const afterMarker = (visible: Seq.Seq<MessageId>, markerId: MessageId): Array<MessageId> => {
  const after: Array<MessageId> = []
  for (let i = visible.length - 1; i >= 0; i--) {
    const id = Seq.get(visible, i)!
    if (id === markerId) return after.reverse()
    after.push(id)
  }
  return []
}

/** Folds one event into the window. */
export const evolve = (state: State, event: Event): State => {
  const conversation = Conversation.evolve(state.conversation, event)
  switch (event._tag) {
    case "CompactionStarted":
      return { ...state, conversation, plans: HashMap.set(state.plans, event.markerId, event.plan) }
    case "SummaryFinished": {
      const summaryId = event.summary.id
      const plan = Option.getOrUndefined(HashMap.get(state.plans, event.markerId))
      const tail = plan?.tail ?? []
      const kept = new Set<MessageId>([event.markerId, summaryId, ...tail])
      const later = afterMarker(state.visible, event.markerId).filter((id) => !kept.has(id))
      return {
        conversation,
        visible: Seq.fromIterable([event.markerId, summaryId, ...tail, ...later]),
        plans: HashMap.remove(state.plans, event.markerId),
        pivot: { markerId: event.markerId, summaryId },
      }
    }
    default: {
      // A new message is the one the conversation's order just grew by.
      if (conversation.order.length > state.conversation.order.length)
        return {
          ...state,
          conversation,
          visible: Seq.append(state.visible, Seq.get(conversation.order, conversation.order.length - 1)!),
        }
      return conversation === state.conversation ? state : { ...state, conversation }
    }
  }
}

/** Folds events from the empty window. */
export const fold = (events: Iterable<Event>, from: State = initial): State => {
  let state = from
  for (const event of events) state = evolve(state, event)
  return state
}

/** The visible messages in model order (O(window)). */
export const messages = (state: State): Array<Message> =>
  Seq.toArray(state.visible).map((id) => Conversation.get(state.conversation, id)!)

/** The window rendered as model messages, each with the id of the stored message it came from. */
export const render = (state: State, options?: Render.Options) => Render.render(messages(state), options)

/** The window as a named projection. */
export const projection: Projection<State> = {
  name: "window",
  version: 1,
  initial,
  evolve: (state, event) => evolve(state, event),
}
