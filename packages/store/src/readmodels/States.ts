/**
 * The one fold behind the built-in read models: a session's window, usage, compaction history, prune index and audit
 * view folded together, event by event (each read model's tables are written from these states, see `ReadModel.ts`).
 */
import {
  Audit,
  CompactionHistory,
  Conversation,
  type Events,
  type Ids,
  type Projection,
  PruneIndex,
  Usage,
  type Window,
} from "@pivot/core"
import type * as SessionLog from "../session/SessionLog.ts"
import * as Timeline from "./timelineFold.ts"

type Event = Events.Event
type MessageId = Ids.MessageId
type Meta = Projection.EventMeta

/** The state of every read model of one session. */
export interface States {
  readonly window: Window.State
  readonly usage: Usage.State
  readonly history: CompactionHistory.State
  readonly pruned: PruneIndex.State
  readonly audit: Audit.State
  /** The viewer's timeline in buckets (`timeline.ts`). */
  readonly timeline: Timeline.State
  /**
   * Resumed from a snapshot: messages before the window's oldest, and old compaction and prune entries, are not held
   * (see `snapshotOf`). Such states serve deltas only; anything needing more is folded from the whole log.
   */
  readonly partial?: true | undefined
}

/** The read models of a session with no events. */
export const initialStates: States = {
  window: Audit.projection.initial.window,
  usage: Usage.projection.initial,
  history: CompactionHistory.projection.initial,
  pruned: PruneIndex.projection.initial,
  audit: Audit.projection.initial,
  timeline: Timeline.initial,
}

/**
 * Folds one event into every read model. The window is the audit view's own window fold (`Audit` folds
 * `Window.evolve`): one fold instead of two, and one line of versions of the conversation's persistent map, which a
 * second fold from the same initial state would make reroot back and forth on every event.
 */
export const evolveStates = (states: States, event: Event, meta: Meta): States => {
  const audit = Audit.projection.evolve(states.audit, event, meta)
  return {
    window: audit.window,
    usage: Usage.projection.evolve(states.usage, event, meta),
    history: CompactionHistory.projection.evolve(states.history, event, meta),
    pruned: PruneIndex.projection.evolve(states.pruned, event, meta),
    audit,
    // Whether the event adds a new message is asked of the conversation before the event.
    timeline: Timeline.evolve(states.timeline, event, meta, Timeline.addsNew(states.window.conversation, event)),
    ...(states.partial === true ? { partial: true } : {}),
  }
}

/**
 * Whether a batch can be projected on partial states: every message an event names, other than one it adds, is held
 * by the window (an event naming an older message, such as a late tool result, needs the whole log).
 */
export const heldFor = (states: States, logged: ReadonlyArray<SessionLog.Logged>): boolean => {
  if (states.partial !== true) return true
  const added = new Set<MessageId>()
  for (const { event } of logged) {
    const adds = Conversation.addedMessage(event)?.id
    // A started compaction names its summary before the summary exists.
    const future = event._tag === "CompactionStarted" ? event.summaryId : undefined
    for (const id of touchedIds(event))
      if (id !== adds && id !== future && !added.has(id) && !Conversation.has(states.window.conversation, id))
        return false
    if (adds !== undefined) added.add(adds)
  }
  return true
}

/** Folds a log into every read model (the pure fold the SQL tables must equal). */
export const foldStates = (log: Iterable<SessionLog.Logged>, from: States = initialStates): States => {
  let states = from
  for (const { event, meta } of log) states = evolveStates(states, event, meta)
  return states
}

// Window and conversation states hold persistent sequences: `length` and `buffer` are their public shape.
export const seqAt = <A>(seq: { readonly length: number; readonly buffer: ReadonlyArray<A> }, i: number): A =>
  seq.buffer[i]!

/** The messages whose stored form an event can change: the one it adds and the ones it names. */
export const touchedIds = (event: Event): Array<MessageId> => {
  const ids: Array<MessageId> = []
  const added = Conversation.addedMessage(event)
  if (added !== undefined) ids.push(added.id)
  const named = event as { readonly messageId?: unknown; readonly markerId?: unknown; readonly summaryId?: unknown }
  for (const id of [named.messageId, named.markerId, named.summaryId])
    if (typeof id === "string") ids.push(id as MessageId)
  return ids
}
