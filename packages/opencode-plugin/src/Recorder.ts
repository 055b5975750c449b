/**
 * Recording a live OpenCode session as pivot events, with `@pivot/opencode`'s importer as the one mapping: the session
 * is read back from OpenCode's own storage (`client.session.messages`), the settled part of it is imported as a whole
 * (`Import.importSession`, pure), and only the events the store does not hold yet are appended, at the stream version
 * they were computed for. Importing a longer prefix of a session gives the same first events (the importer places
 * everything at the time it happened), so each sync extends the log: nothing is written twice, and a restarted
 * OpenCode (or plugin) resumes from whatever the store holds, with nothing lost.
 *
 * What "settled" means is the one rule that keeps the prefix stable: a message is imported only once OpenCode will not
 * change it any more (an assistant message once completed; a compaction marker once its summary ended, since OpenCode
 * writes the marker's tail start while it runs; a user message once a model call was built from it).
 */
import { Events, type Message } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { type AppendError, type EventStore, type ReadError, SessionLog, type UndecodableEvent } from "@pivot/store"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { MessageWithParts } from "./OpenCode.ts"

/** The event types the importer writes; every other event in a session's stream was written by pivot itself. */
export const IMPORTED: ReadonlySet<string> = new Set([
  "SessionStarted",
  "UserMessageAdded",
  "AssistantStepRecorded",
  "CompactionRequested",
  "CompactionStarted",
  "SummaryFinished",
  "SummaryFailed",
  "ContinueRequested",
  "TurnReplayed",
  "PartCompacted",
])

/**
 * Whether `event` is one the importer writes: its kind is `IMPORTED` and, for a `PartCompacted`, no strategy rule
 * chose it (OpenCode's prune names none; pivot's own prunes under drive mode do).
 */
export const isImported = (event: Events.Event): boolean =>
  IMPORTED.has(event._tag) && !(event._tag === "PartCompacted" && event.rule !== undefined)

/**
 * How much of the session to take: `step` (an OpenCode event: finished messages only), `call` (a model call is
 * being built: the user messages it answers are complete too), `idle` (the session stopped: also a compaction marker
 * whose summary never came).
 */
export type Moment = "step" | "call" | "idle"

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const isMarker = (m: MessageWithParts) => m.info.role === "user" && m.parts.some((p) => p.type === "compaction")

/** Whether OpenCode is done writing an assistant message: it completed, or it failed. */
const isFinished = (m: MessageWithParts) => {
  const time = m.info.time
  return (isRecord(time) && typeof time.completed === "number") || m.info.error !== undefined
}

/**
 * The settled prefix of a session's messages, in id order (OpenCode ids sort chronologically): up to the newest
 * assistant message still being written (an unfinished one with a later assistant message was abandoned: OpenCode
 * moved on, e.g. after an overflow; one still unfinished when the session stopped stays so), or the first compaction marker
 * whose summary has not ended (before `idle`); before `call`, without the user messages no model call has answered
 * yet (their parts may still be arriving).
 */
export const settled = (messages: ReadonlyArray<MessageWithParts>, moment: Moment): Array<MessageWithParts> => {
  const sorted = [...messages].sort((a, b) => (a.info.id < b.info.id ? -1 : a.info.id > b.info.id ? 1 : 0))
  const summarised = new Set(
    sorted
      .filter((m) => m.info.role === "assistant" && m.info.summary === true && isFinished(m))
      .map((m) => m.info.parentID),
  )
  let cut = sorted.findIndex(
    (m, i) =>
      (moment !== "idle" &&
        m.info.role === "assistant" &&
        !isFinished(m) &&
        !sorted.slice(i + 1).some((later) => later.info.role === "assistant")) ||
      (moment !== "idle" && isMarker(m) && !summarised.has(m.info.id)),
  )
  if (cut === -1) {
    cut = sorted.length
    if (moment === "step") while (cut > 0 && sorted[cut - 1]!.info.role === "user") cut--
  }
  return sorted.slice(0, cut)
}

/** The session's stored events are not a prefix of what OpenCode holds now: nothing was appended. */
export class Diverged extends Data.TaggedError("Diverged")<{
  readonly sessionId: string
  readonly at: number
}> {
  override get message(): string {
    return `session ${this.sessionId}: the stored event ${this.at} differs from what OpenCode holds now; recording stopped for it (events are never rewritten)`
  }
}

/** OpenCode's session could not be imported (its shape was not an export's). */
export class Unreadable extends Data.TaggedError("Unreadable")<{
  readonly sessionId: string
  readonly reason: string
}> {
  override get message(): string {
    return `session ${this.sessionId}: ${this.reason}`
  }
}

/** What a sync did. */
export interface Synced {
  /** Events appended now. */
  readonly appended: number
  /** The stream version after the sync. */
  readonly version: number
  /** The session's first user message, when this sync recorded it (the plugin's default pin is made then). */
  readonly firstUserMessage?: string | undefined
  /** The compaction markers this sync recorded (`CompactionRequested`), oldest first. */
  readonly markers?: ReadonlyArray<Message.UserMessage> | undefined
}

/** What the recorder remembers of a stream between syncs, so a sync reads only what others appended since. */
interface Known {
  readonly version: number
  /** Imported events in the stream. */
  readonly imported: number
  /** The last imported event, encoded (for the prefix check). */
  readonly last: string | undefined
  /** The session's title as the stream folds it (`Events.title`). */
  readonly title: string | undefined
  /**
   * The parts pivot's own rules pruned: when OpenCode prunes one of them later, its import is left out (the part is
   * pruned once; pivot never prunes a part OpenCode pruned before, so what is left out always comes after).
   */
  readonly pivotPruned: ReadonlySet<string>
}

// The session title changes after the first turn (OpenCode writes it then); the first one recorded stays.
const comparable = (event: Events.Event): string => {
  if (event._tag !== "SessionStarted") return JSON.stringify(Events.encode(event))
  const { title: _, ...rest } = event
  return JSON.stringify(Events.encode(rest as Events.Event))
}

/** The title of an exported session's info, when it has one. */
const titleOf = (info: unknown): string | undefined =>
  isRecord(info) && typeof info.title === "string" ? info.title : undefined

/** A recorder: one per store. Syncs of one session must not overlap (the plugin queues them). */
export const make = () => {
  const known = new Map<string, Known>()

  const load = (sessionId: string): Effect.Effect<Known, ReadError | UndecodableEvent, EventStore> =>
    Effect.gen(function* () {
      const version = yield* SessionLog.version(sessionId)
      const cached = known.get(sessionId)
      if (cached !== undefined && cached.version === version) return cached
      const from = cached !== undefined && cached.version < version ? cached.version + 1 : 1
      const logged = version === 0 ? [] : yield* SessionLog.read(sessionId, { from })
      let imported = from === 1 ? 0 : cached!.imported
      let last = from === 1 ? undefined : cached!.last
      let title = from === 1 ? undefined : cached!.title
      const pivotPruned = new Set(from === 1 ? [] : cached!.pivotPruned)
      for (const { event } of logged) {
        title = Events.title(title, event)
        if (isImported(event)) {
          imported++
          last = comparable(event)
        } else if (event._tag === "PartCompacted" && event.target !== "input") pivotPruned.add(event.partId)
      }
      const fresh = { version, imported, last, title, pivotPruned }
      known.set(sessionId, fresh)
      return fresh
    })

  /**
   * Appends the events of `exported` (an `opencode export`-shaped session) the store does not hold yet, then a
   * `SessionTitled` when OpenCode's title is not the one the stream folds to (OpenCode titles a session after its
   * first message: the import takes the newest title into `SessionStarted`, the live record follows it this way).
   */
  const sync = (
    sessionId: string,
    exported: { readonly info: unknown; readonly messages: ReadonlyArray<MessageWithParts> },
    moment: Moment,
  ): Effect.Effect<Synced, Diverged | Unreadable | ReadError | UndecodableEvent | AppendError, EventStore> =>
    Effect.gen(function* () {
      const messages = settled(exported.messages, moment)
      if (messages.length === 0) return { appended: 0, version: yield* SessionLog.version(sessionId) }
      const imported = Import.importSession({ info: exported.info, messages })
      if (Result.isFailure(imported))
        return yield* new Unreadable({ sessionId, reason: imported.failure.message.split("\n")[0]! })
      const stored = yield* load(sessionId)
      const events = imported.success.events.filter(
        (e) => !(e._tag === "PartCompacted" && stored.pivotPruned.has(e.partId)),
      )
      if (
        stored.imported > 0 &&
        events.length > stored.imported &&
        comparable(events[stored.imported - 1]!) !== stored.last
      )
        return yield* new Diverged({ sessionId, at: stored.imported })
      const fresh: Array<Events.Event> = events.slice(stored.imported)
      const folded = fresh.reduce(Events.title, stored.title)
      const title = titleOf(exported.info)
      if (title !== undefined && title !== folded && stored.version + fresh.length > 0)
        fresh.push({ _tag: "SessionTitled", at: yield* Clock.currentTimeMillis, title })
      if (fresh.length === 0) return { appended: 0, version: stored.version }
      const entries = fresh.map((event, i) => ({ id: SessionLog.eventId(sessionId, stored.version + i + 1), event }))
      yield* SessionLog.append(sessionId, stored.version === 0 ? "no-stream" : stored.version, entries)
      const version = stored.version + fresh.length
      const first = events.findIndex((e) => e._tag === "UserMessageAdded")
      const firstUserMessage =
        first >= stored.imported && events[first]!._tag === "UserMessageAdded" ? events[first]!.message.id : undefined
      const importedNow = Math.max(stored.imported, events.length)
      known.set(sessionId, {
        version,
        imported: importedNow,
        last: importedNow === stored.imported ? stored.last : comparable(events.at(-1)!),
        title: fresh.reduce(Events.title, stored.title),
        pivotPruned: stored.pivotPruned,
      })
      const markers = fresh.flatMap((e) => (e._tag === "CompactionRequested" ? [e.marker] : []))
      return {
        appended: fresh.length,
        version,
        ...(firstUserMessage === undefined ? {} : { firstUserMessage }),
        ...(markers.length === 0 ? {} : { markers }),
      }
    })

  return { sync, forget: (sessionId: string) => known.delete(sessionId) }
}

/** A recorder's operations. */
export type Recorder = ReturnType<typeof make>
