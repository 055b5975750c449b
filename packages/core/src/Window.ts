/**
 * The model-input window as a projection: which stored messages the next model call sees, in which order. A pure,
 * incremental fold over the session's events (each event costs O(1) on the newest state; a pivot costs O(window)).
 *
 * Pivot semantics follow OpenCode (spec §2.11) with its defects fixed:
 * - only a finished, error-free summary answering a marker forms a pivot; the window becomes
 *   `[marker, summary, …kept tail…, …messages after the marker…]`, everything after the pair in recorded order;
 * - the kept tail is the recorded list of the plan, restricted to messages recorded before the marker and still
 *   visible: it never contains an older marker or summary (OpenCode can show two summaries at once) nor the turn that
 *   overflowed (OpenCode can keep it in the tail and replay it too); a tail id recorded after the marker is already
 *   one of the messages after the marker, so it keeps its recorded place;
 * - a failed or errored summary changes nothing (in OpenCode its tail can hide the previous good pivot).
 *
 * `ValidWindow` states and checks the resulting invariant; `render` applies its repair, so what is sent is valid.
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Conversation from "./Conversation.ts"
import type { CompactionPlan, Event } from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import * as Seq from "./internal/Seq.ts"
import { isFinishedSummary, isMarker, type Message } from "./Message.ts"
import * as Pins from "./Pins.ts"
import type { Projection } from "./Projection.ts"
import type * as Render from "./Render.ts"
import * as ValidWindow from "./ValidWindow.ts"

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
  /** The pins in force, oldest first: their messages come back at every pivot (`Pins`). */
  readonly pins: ReadonlyArray<Pins.Pin>
}

/** The window of an empty session. */
export const initial: State = {
  conversation: Conversation.initial,
  visible: Seq.empty(),
  plans: HashMap.empty(),
  pivot: undefined,
  pins: [],
}

/** Whether a settled summary forms a pivot: it is finished and error-free (spec §2.11) and answers a marker. */
export const formsPivot = (summary: Message, marker: Message | undefined): boolean =>
  isFinishedSummary(summary) && marker !== undefined && isMarker(marker)

/**
 * The window right after a finished summary: the marker and the summary, then the plan's tail ids recorded before the
 * marker that are still visible and the pinned messages recorded before the marker (`Pins`; never the turn the
 * compaction replays), then the visible messages recorded after the marker, all in recorded order.
 * Undefined when the summary forms no pivot (not a finished, error-free summary, or its marker is not a marker).
 *
 * Scans the recorded order from the newest message back to the marker and then only as far as the oldest kept tail
 * id: O(window) for the visible set, O(later + kept tail) for the scan.
 */
const pivoted = (
  state: State,
  conversation: Conversation.State,
  markerId: MessageId,
  summary: Message,
  plan: CompactionPlan | undefined,
): Seq.Seq<MessageId> | undefined => {
  if (!formsPivot(summary, Conversation.get(conversation, markerId))) return undefined
  const visible = new Set(Seq.toArray(state.visible))
  visible.delete(markerId)
  visible.delete(summary.id)
  const tail = new Set((plan?.tail ?? []).filter((id) => visible.has(id)))
  for (const id of Pins.messageIds(state.pins))
    if (id !== markerId && id !== plan?.replayOf && Conversation.has(conversation, id)) tail.add(id)
  const kept: Array<MessageId> = []
  let beforeMarker = false
  for (let i = conversation.order.length - 1; i >= 0; i--) {
    const id = Seq.get(conversation.order, i)!
    if (id === markerId) beforeMarker = true
    else if (!beforeMarker) {
      if (visible.has(id)) kept.push(id)
      tail.delete(id)
    } else if (tail.delete(id)) kept.push(id)
    if (beforeMarker && tail.size === 0) break
  }
  return Seq.fromIterable([markerId, summary.id, ...kept.reverse()])
}

/** The state with the conversation advanced; a new message is the one the conversation's order just grew by. */
const appended = (state: State, conversation: Conversation.State): State => {
  if (conversation.order.length > state.conversation.order.length)
    return {
      ...state,
      conversation,
      visible: Seq.append(state.visible, Seq.get(conversation.order, conversation.order.length - 1)!),
    }
  return conversation === state.conversation ? state : { ...state, conversation }
}

/** Folds one event into the window. */
export const evolve = (state: State, event: Event): State => {
  const conversation = Conversation.evolve(state.conversation, event)
  switch (event._tag) {
    case "CompactionStarted":
      return { ...state, conversation, plans: HashMap.set(state.plans, event.markerId, event.plan) }
    case "SummaryFinished": {
      const plan = Option.getOrUndefined(HashMap.get(state.plans, event.markerId))
      const visible = pivoted(state, conversation, event.markerId, event.summary, plan)
      // A summary that forms no pivot is an ordinary message in its recorded place.
      if (visible === undefined)
        return appended({ ...state, plans: HashMap.remove(state.plans, event.markerId) }, conversation)
      return {
        ...state,
        conversation,
        visible,
        plans: HashMap.remove(state.plans, event.markerId),
        pivot: { markerId: event.markerId, summaryId: event.summary.id },
      }
    }
    case "ContextPinned": {
      const pin: Pins.Pin = {
        messageId: event.messageId,
        ...(event.partId === undefined ? {} : { partId: event.partId }),
        by: event.by,
        tokens: event.tokens,
        at: event.at,
      }
      const k = Pins.key(pin)
      return { ...state, pins: [...state.pins.filter((p) => Pins.key(p) !== k), pin] }
    }
    case "ContextUnpinned": {
      const k = Pins.key(event)
      return { ...state, pins: state.pins.filter((p) => Pins.key(p) !== k) }
    }
    default:
      return appended(state, conversation)
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

/**
 * `messages(state)`, given `messages(previous)` of an earlier state of the same session: when `state` only appended
 * visible messages and changed no message recorded before `previous` (a step, a user message), `previousMessages`
 * with the new ones added, without looking each visible message up again; otherwise `messages(state)`.
 */
export const messagesAfter = (
  previous: State,
  previousMessages: ReadonlyArray<Message>,
  state: State,
): Array<Message> => {
  const before = previous.visible
  const now = state.visible
  // A `Seq` version's items never change: the same buffer and no shorter means `previous`'s ids, then new ones.
  if (now.buffer !== before.buffer || now.length < before.length || previousMessages.length !== before.length)
    return messages(state)
  // No message of `previous` changed when every key changed since is a message recorded since (the conversation's
  // order lists each message once, when first recorded).
  const order = state.conversation.order
  const orderBefore = previous.conversation.order
  if (order.buffer !== orderBefore.buffer || order.length < orderBefore.length) return messages(state)
  const changed = state.conversation.messages.keysChangedSince(previous.conversation.messages, 64)
  if (changed === undefined) return messages(state)
  const recorded = new Set<MessageId>()
  for (let i = orderBefore.length; i < order.length; i++) recorded.add(order.buffer[i]!)
  for (const id of changed) if (!recorded.has(id)) return messages(state)
  const out = previousMessages.slice()
  for (let i = before.length; i < now.length; i++) out.push(Conversation.get(state.conversation, now.buffer[i]!)!)
  return out
}

/**
 * The window rendered as model messages, each with the id of the stored message it came from, repaired by
 * `ValidWindow.repair` so that it is always a valid model input.
 */
export const render = (state: State, options?: Render.Options): ReadonlyArray<Render.Rendered> =>
  ValidWindow.render(messages(state), options)

/** The window as a named projection. */
export const projection: Projection<State> = {
  name: "window",
  version: 1,
  initial,
  evolve: (state, event) => evolve(state, event),
}
