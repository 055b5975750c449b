/**
 * Bounded live state: what a long-lived session must keep in memory, and dropping the rest.
 *
 * A fold from the events keeps every message ever recorded. Once a pivot has formed, most of them can never be seen
 * by a rule again: the window starts at the pivot, pruning stops at the newest summary, and a compaction plans from
 * the window. `retain` keeps every message from the oldest one any rule can still reach, and remembers the ids of the
 * dropped ones (the greatest id of their ascending run, and a Bloom filter of any others), so a command that names
 * one of them (a retried old message, a late tool result for an old step) is recognised and decided on the whole log instead (`mayNeedHistory`).
 *
 * Reachable: the visible messages, the newest finished step, the message of the latest overflow report, the turn
 * the latest pivot may still replay, and any ids the caller names (the runtime's own pointers). Pinned messages are
 * held too, however old (the next pivot brings them back), without holding what lies between. Nothing is dropped
 * while a compaction is pending or before the first pivot.
 */
import * as HashMap from "effect/HashMap"
import * as Conversation from "./Conversation.ts"
import type { Event } from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import * as BloomFilter from "./internal/BloomFilter.ts"
import { PersistentMap } from "./internal/PersistentMap.ts"
import * as Seq from "./internal/Seq.ts"
import type { Message } from "./Message.ts"
import * as Session from "./Session.ts"
import type * as Window from "./Window.ts"

/** Messages the state no longer holds (0 for a state folded from the events alone). */
export const retiredCount = (state: Session.State): number => state.retired?.count ?? 0

/** The ids a rule may still look up on this state. */
const reachable = (state: Session.State, keep: Iterable<MessageId | undefined>): Set<MessageId> => {
  const ids = new Set<MessageId>(Seq.toArray(state.window.visible))
  const add = (id: MessageId | undefined) => {
    if (id !== undefined) ids.add(id)
  }
  add(state.lastFinished)
  add(state.overflowReported)
  const pivot = state.window.pivot
  if (pivot !== undefined) {
    const latest = Session.compaction(state, pivot.markerId)
    if (latest !== undefined && latest.status !== "continued") add(latest.plan?.replayOf)
  }
  for (const id of keep) add(id)
  return ids
}

/**
 * The state without the messages no rule can reach (see the module comment); the same state when there is nothing
 * to drop. Windows, decisions on anything but a dropped message, and later folds are unchanged.
 */
export const retain = (state: Session.State, keep: Iterable<MessageId | undefined> = []): Session.State => {
  if (state.window.pivot === undefined || state.pending !== undefined) return state
  const trimmed = keepFrom(state.window, reachable(state, keep))
  if (trimmed === undefined) return state
  return {
    ...state,
    window: trimmed.window,
    compactions: HashMap.filter(state.compactions, (_, markerId) => trimmed.held.has(markerId)),
    retired: retire(state.retired, trimmed.dropped),
  }
}

/**
 * The window without the messages recorded before the oldest of `needed` it holds, and without the plans of markers
 * it no longer holds; undefined when nothing would be dropped.
 */
const keepFrom = (
  window: Window.State,
  needed: ReadonlySet<MessageId>,
):
  | { readonly window: Window.State; readonly dropped: ReadonlyArray<MessageId>; readonly held: Set<MessageId> }
  | undefined => {
  const conversation = window.conversation
  // Pinned messages are held on their own (below), so they do not hold back the horizon.
  const pinned = new Set<MessageId>(window.pins.map((p) => p.messageId))
  let remaining = 0
  for (const id of needed) if (!pinned.has(id) && Conversation.has(conversation, id)) remaining++
  let horizon = conversation.order.length
  while (remaining > 0 && horizon > 0) {
    horizon--
    const id = Seq.get(conversation.order, horizon)!
    if (needed.has(id) && !pinned.has(id)) remaining--
  }
  if (horizon === 0) return undefined
  const all = Seq.toArray(conversation.order)
  // Pinned messages recorded before the horizon stay held (a pivot brings them back), in recorded order.
  const older = pinned.size === 0 ? [] : all.slice(0, horizon).filter((id) => pinned.has(id))
  const kept = older.length === 0 ? all.slice(horizon) : [...older, ...all.slice(horizon)]
  const held = new Set(kept)
  const dropped = older.length === 0 ? all.slice(0, horizon) : all.slice(0, horizon).filter((id) => !pinned.has(id))
  if (dropped.length === 0) return undefined
  return {
    window: {
      ...window,
      conversation: {
        messages: PersistentMap.fromEntries(
          kept.map((id): [MessageId, Message] => [id, Conversation.get(conversation, id)!]),
        ),
        order: Seq.fromIterable(kept),
      },
      plans: HashMap.filter(window.plans, (_, markerId) => held.has(markerId)),
    },
    dropped,
    held,
  }
}

const retire = (retired: Session.Retired | undefined, dropped: ReadonlyArray<MessageId>): Session.Retired => {
  let below = retired?.below
  let ids = retired?.ids ?? BloomFilter.empty
  let i = 0
  // The ascending run goes on while no id went into the filter and each id is greater than the last.
  if (ids.count === 0) while (i < dropped.length && (below === undefined || dropped[i]! > below)) below = dropped[i++]!
  if (i < dropped.length) ids = BloomFilter.add(ids, dropped.slice(i))
  return { count: (retired?.count ?? 0) + dropped.length, below, ids }
}

/** Whether the message with this id may be one `retain` dropped (false: it certainly is not). */
export const mayBeRetired = (state: Session.State, id: MessageId): boolean => {
  const retired = state.retired
  if (retired === undefined) return false
  return (retired.below !== undefined && id <= retired.below) || BloomFilter.mightContain(retired.ids, id)
}

/**
 * Whether a decision taken on a retained state may differ from one on the whole log, so that it must be taken
 * again on the whole log: the state dropped messages, and the command was refused (it may name a dropped message)
 * or its events add a message whose id may be a dropped one (a retry of an old message).
 */
export const mayNeedHistory = (
  state: Session.State,
  decided: { readonly refused: boolean; readonly events: ReadonlyArray<Event> },
): boolean => {
  if (state.retired === undefined) return false
  if (decided.refused) return true
  for (const event of decided.events) {
    const added = Conversation.addedMessage(event)
    if (added !== undefined && mayBeRetired(state, added.id)) return true
  }
  return false
}

/**
 * The window alone without the messages recorded before its oldest visible one (for projections that fold only the
 * window, such as the read models), and without the plans of compactions whose marker it no longer holds. The window
 * fold never looks further back: a pivot keeps visible messages only, and a plan's tail counts only its visible ids.
 */
export const retainWindow = (window: Window.State): Window.State =>
  keepFrom(window, new Set(Seq.toArray(window.visible)))?.window ?? window
