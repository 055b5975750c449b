/**
 * The stored conversation as a fold: every message ever recorded, in order, with its current parts. Pruning and late
 * tool results update a message's state here; nothing is ever removed. Each event costs O(1) on the newest state.
 */
import type { Event } from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import { PersistentMap } from "./internal/PersistentMap.ts"
import * as Seq from "./internal/Seq.ts"
import type { AssistantPart, Message } from "./Message.ts"

/** All messages by id, and their order of arrival. */
export interface State {
  readonly messages: PersistentMap<MessageId, Message>
  readonly order: Seq.Seq<MessageId>
}

/** The empty conversation. */
export const initial: State = { messages: PersistentMap.empty(), order: Seq.empty() }

/** The message with this id, if recorded. */
export const get = (state: State, id: MessageId): Message | undefined => state.messages.get(id)

/** Whether a message with this id was recorded. */
export const has = (state: State, id: MessageId): boolean => state.messages.has(id)

/** Every message in order of arrival (O(n)). */
export const messages = (state: State): Array<Message> => Seq.toArray(state.order).map((id) => get(state, id)!)

/** Messages from the newest to the oldest, read lazily. */
export function* newestFirst(state: State): Generator<Message> {
  for (let i = state.order.length - 1; i >= 0; i--) yield get(state, Seq.get(state.order, i)!)!
}

/** The message an event adds, if it adds one. */
export const addedMessage = (event: Event): Message | undefined => {
  switch (event._tag) {
    case "UserMessageAdded":
    case "AssistantStepRecorded":
    case "ProviderErrorReported":
    case "TurnReplayed":
    case "ContinueRequested":
      return event.message
    case "CompactionRequested":
      return event.marker
    case "SummaryFinished":
    case "SummaryFailed":
      return event.summary
    default:
      return undefined
  }
}

const put = (state: State, message: Message): State => {
  const messages = state.messages.set(message.id, message)
  // One map operation per message: the size tells whether the id is new.
  return { messages, order: messages.size > state.messages.size ? Seq.append(state.order, message.id) : state.order }
}

const updateAssistantPart = (
  state: State,
  messageId: MessageId,
  partId: string,
  update: (part: AssistantPart) => AssistantPart,
): State => {
  const message = get(state, messageId)
  if (message?.role !== "assistant") return state
  return put(state, { ...message, parts: message.parts.map((part) => (part.id === partId ? update(part) : part)) })
}

/** Folds one event into the conversation. */
export const evolve = (state: State, event: Event): State => {
  const added = addedMessage(event)
  if (added) return put(state, added)
  switch (event._tag) {
    case "ToolResultRecorded":
      return updateAssistantPart(state, event.messageId, event.partId, (part) =>
        part.type === "tool" ? { ...part, state: event.state } : part,
      )
    case "PartCompacted":
      return updateAssistantPart(state, event.messageId, event.partId, (part) =>
        part.type !== "tool"
          ? part
          : event.target === "input"
            ? part.state.status === "completed" || part.state.status === "error"
              ? { ...part, state: { ...part.state, inputClearedAt: event.at } }
              : part
            : part.state.status === "completed"
              ? { ...part, state: { ...part.state, compactedAt: event.at } }
              : part,
      )
    case "CompactionStarted": {
      const marker = get(state, event.markerId)
      const tailStartId = event.plan.tailStartId
      if (marker?.role !== "user" || tailStartId === undefined) return state
      return put(state, {
        ...marker,
        parts: marker.parts.map((part) => (part.type === "compaction" ? { ...part, tailStartId } : part)),
      })
    }
    default:
      return state
  }
}
