/**
 * A session's folded state as JSON-safe data and back, for snapshots: resuming a session from its latest snapshot
 * and the events after it gives the state a fold from the first event gives (after `Retention.retain`, which
 * snapshots are taken of). The format is versioned by `FORMAT`; a reader refuses any other.
 */
import * as HashMap from "effect/HashMap"
import * as Conversation from "./Conversation.ts"
import type { CompactionPlan } from "./Events.ts"
import type { MessageId, SessionId } from "./Ids.ts"
import * as BloomFilter from "./internal/BloomFilter.ts"
import { PersistentMap } from "./internal/PersistentMap.ts"
import * as Seq from "./internal/Seq.ts"
import type { Message } from "./Message.ts"
import type * as Pins from "./Pins.ts"
import type * as Session from "./Session.ts"
import type * as Window from "./Window.ts"

/** The version of the encoded shape below; bumped whenever it, or what the fold puts in a state, changes. */
export const FORMAT = 2

/** A session state as JSON-safe data. */
export interface Encoded extends EncodedWindow {
  readonly format: number
  readonly sessionId: string | null
  readonly version: number
  readonly pending: string | null
  readonly lastFinished: string | null
  readonly overflowReported: string | null
  readonly compactions: ReadonlyArray<Session.Compaction>
  readonly retired: {
    readonly count: number
    readonly below: string | null
    readonly ids: BloomFilter.Encoded
  } | null
}

/** A window as JSON-safe data. */
export interface EncodedWindow {
  /** The messages held, in recorded order. */
  readonly messages: ReadonlyArray<Message>
  readonly visible: ReadonlyArray<string>
  readonly plans: ReadonlyArray<readonly [string, CompactionPlan]>
  readonly pivot: { readonly markerId: string; readonly summaryId: string } | null
  /** The pins in force, oldest first (format 2). */
  readonly pins: ReadonlyArray<Pins.Pin>
}

/** Encodes a window. O(messages held). */
export const encodeWindow = (window: Window.State): EncodedWindow => ({
  messages: Conversation.messages(window.conversation),
  visible: Seq.toArray(window.visible),
  plans: [...HashMap.entries(window.plans)],
  pivot: window.pivot ?? null,
  pins: window.pins,
})

/** Decodes a window; throws `SnapshotFormatError` on data of the wrong shape. */
export const decodeWindow = (e: EncodedWindow): Window.State => {
  check(Array.isArray(e.messages) && Array.isArray(e.visible), "bad messages")
  check(Array.isArray(e.plans), "bad plans")
  check(Array.isArray(e.pins), "bad pins")
  const messages = PersistentMap.fromEntries(e.messages.map((m): [MessageId, Message] => [m.id, m]))
  check(messages.size === e.messages.length, "duplicate message ids")
  for (const id of e.visible) check(messages.has(id as MessageId), `visible ${id} is not held`)
  return {
    conversation: { messages, order: Seq.fromIterable(e.messages.map((m) => m.id)) },
    visible: Seq.fromIterable(e.visible as ReadonlyArray<MessageId>),
    plans: HashMap.fromIterable(e.plans as ReadonlyArray<readonly [MessageId, CompactionPlan]>),
    pivot:
      e.pivot === null
        ? undefined
        : { markerId: e.pivot.markerId as MessageId, summaryId: e.pivot.summaryId as MessageId },
    pins: e.pins,
  }
}

/** Encodes a state. O(messages held). */
export const encode = (state: Session.State): Encoded => ({
  format: FORMAT,
  sessionId: state.sessionId ?? null,
  version: state.version,
  pending: state.pending ?? null,
  lastFinished: state.lastFinished ?? null,
  overflowReported: state.overflowReported ?? null,
  ...encodeWindow(state.window),
  compactions: [...HashMap.values(state.compactions)],
  retired:
    state.retired === undefined
      ? null
      : { count: state.retired.count, below: state.retired.below ?? null, ids: BloomFilter.encode(state.retired.ids) },
})

/** Why encoded data was refused. */
export class SnapshotFormatError extends Error {
  override readonly name = "SnapshotFormatError"
}

const check = (ok: boolean, what: string) => {
  if (!ok) throw new SnapshotFormatError(what)
}

const idOrUndefined = (value: string | null) => (value === null ? undefined : (value as MessageId))

/** Decodes a state; throws `SnapshotFormatError` on another format or data of the wrong shape. */
export const decode = (data: unknown): Session.State => {
  const e = data as Encoded
  check(typeof e === "object" && e !== null, "not an object")
  check(e.format === FORMAT, `format ${String(e.format)}, this program reads ${FORMAT}`)
  check(Number.isSafeInteger(e.version) && e.version >= 0, "bad version")
  check(Array.isArray(e.compactions), "bad compactions")
  return {
    sessionId: e.sessionId === null ? undefined : (e.sessionId as SessionId),
    version: e.version,
    window: decodeWindow(e),
    compactions: HashMap.fromIterable(e.compactions.map((c): [MessageId, Session.Compaction] => [c.markerId, c])),
    pending: idOrUndefined(e.pending),
    lastFinished: idOrUndefined(e.lastFinished),
    overflowReported: idOrUndefined(e.overflowReported),
    ...(e.retired === null
      ? {}
      : {
          retired: {
            count: e.retired.count,
            below: idOrUndefined(e.retired.below),
            ids: BloomFilter.decode(e.retired.ids),
          },
        }),
  }
}
