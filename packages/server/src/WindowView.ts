/**
 * The window at a version for the viewer, and what changes between two versions: pure functions of a session's log.
 * The window is replayed exactly as `pivot window --at` replays it (`Replay.originOf`, then the window fold from that
 * origin), its bytes come from `ValidWindow.toJson` (the CLI's own), and each stored message carries the events it came
 * from (the audit fold over the same events: every event that touches a visible message comes after its origin).
 */
import {
  Audit,
  type CompactionHistory,
  Conversation,
  Facts,
  Message,
  type ModelMessage,
  Recall,
  Render,
  ValidWindow,
  Window,
} from "@pivot/core"
import { Replay, type SessionLog } from "@pivot/store"

type Logged = SessionLog.Logged

/** The window after the first `version` events of a log (`version` must be within the log). */
export interface At {
  readonly version: number
  readonly messages: ReadonlyArray<Message.Message>
  /** Event ids each visible message came from. */
  readonly sources: ReadonlyMap<string, ReadonlyArray<string>>
  readonly pivot: Window.Pivot | undefined
  /** Messages the latest pivot kept verbatim after its summary. */
  readonly tail: ReadonlySet<string>
}

/**
 * Replays the window at `version` from an in-memory log (stream versions ascending), starting at the latest pivot's
 * origin: `origin` when the caller tracks it (`SessionView.originAt`), else found with `Replay.originOf`.
 */
export const at = (log: ReadonlyArray<Logged>, version: number, origin = Replay.originOf(log, version)): At => {
  let state = Audit.initial
  for (let i = firstAtOrAfter(log, origin); i < log.length; i++) {
    const { event, meta } = log[i]!
    if (meta.version > version) break
    state = Audit.projection.evolve(state, event, meta)
  }
  const window = state.window
  const messages = Window.messages(window)
  const sources = new Map<string, ReadonlyArray<string>>()
  for (const message of messages) sources.set(message.id, state.sources.get(message.id) ?? [])
  // The window forgets an applied plan; the log still holds it (the latest start of the pivot's compaction).
  const markerId = window.pivot?.markerId
  let tail: ReadonlyArray<string> = []
  if (markerId !== undefined)
    for (let i = Math.min(version, log.length) - 1; i >= 0; i--) {
      const event = log[i]!.event
      if (event._tag === "CompactionStarted" && event.markerId === markerId) {
        tail = event.plan.tail
        break
      }
    }
  return { version, messages, sources, pivot: window.pivot, tail: new Set(tail) }
}

/** The index of the first event of the log at or after stream version `version`. */
const firstAtOrAfter = (log: ReadonlyArray<Logged>, version: number): number => {
  let lo = 0
  let hi = log.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (log[mid]!.meta.version < version) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The exact bytes `pivot window --at VERSION --format json` prints for this window. */
export const json = (view: At): string => ValidWindow.toJson(view.messages)

/** What a stored message is in the window. */
export type EntryKind = "marker" | "summary" | "tail" | "message"

/** A tool output pruned from the model input, with the original kept in storage. */
export interface PrunedOutput {
  readonly partId: string
  readonly tool: string
  readonly original: string
}

/** One stored message of the window as the viewer shows it. */
export interface Entry {
  readonly messageId: string
  readonly role: "user" | "assistant"
  readonly kind: EntryKind
  /** The model messages it renders to (what the model sees). */
  readonly model: ReadonlyArray<ModelMessage.ModelMessage>
  readonly eventIds: ReadonlyArray<string>
  readonly pruned: ReadonlyArray<PrunedOutput>
  /** For a summary: its text without the facts block, and the facts block. */
  readonly summary?: { readonly text: string; readonly facts: string | undefined }
}

const summaryParts = (text: string) => {
  const at = text.indexOf(Facts.HEADING)
  return at < 0 ? { text, facts: undefined } : { text: text.slice(0, at).trimEnd(), facts: text.slice(at) }
}

/** The window's stored messages as entries: kind, model messages, source events, pruned outputs. */
export const entries = (view: At): Array<Entry> =>
  view.messages.map((message) => {
    const kind: EntryKind =
      view.pivot?.markerId === message.id || Message.isMarker(message)
        ? "marker"
        : message.role === "assistant" && message.summary === true
          ? "summary"
          : view.tail.has(message.id)
            ? "tail"
            : "message"
    const pruned: Array<PrunedOutput> = []
    if (message.role === "assistant")
      for (const part of message.parts)
        if (part.type === "tool" && part.state.status === "completed" && part.state.compactedAt !== undefined)
          pruned.push({ partId: part.id, tool: part.tool, original: part.state.output })
    const text = message.role === "assistant" && kind === "summary" ? Message.summaryText(message) : undefined
    return {
      messageId: message.id,
      role: message.role,
      kind,
      model: Render.renderMessage(message),
      eventIds: view.sources.get(message.id) ?? [],
      pruned,
      ...(text === undefined ? {} : { summary: summaryParts(text) }),
    }
  })

/** How one model message changed between two versions. */
export type Change = "same" | "entered" | "left" | "replaced" | "changed"

/** One row of a diff: a model message of either version, keyed by its source message and position in it. */
export interface DiffRow {
  readonly change: Change
  readonly key: string
  readonly sourceMessageId: string
  readonly before?: ModelMessage.ModelMessage
  readonly after?: ModelMessage.ModelMessage
}

const keyed = (rendered: ReadonlyArray<Render.Rendered>) => {
  const seen = new Map<string, number>()
  return rendered.map((r) => {
    const n = seen.get(r.sourceMessageId) ?? 0
    seen.set(r.sourceMessageId, n + 1)
    return { key: `${r.sourceMessageId}#${n}`, ...r }
  })
}

/**
 * The model input at `from` against the one at `to`: what entered, what left, what a placeholder replaced (a pruned
 * output), and what otherwise changed. Rows follow the newer window, with what left at the place it held.
 */
export const diff = (from: ReadonlyArray<Message.Message>, to: ReadonlyArray<Message.Message>): Array<DiffRow> => {
  const a = keyed(ValidWindow.render(from))
  const b = keyed(ValidWindow.render(to))
  const before = new Map(a.map((r) => [r.key, r]))
  const after = new Set(b.map((r) => r.key))
  const rows: Array<DiffRow> = []
  let i = 0
  const flushLeft = (until: string | undefined) => {
    while (i < a.length && a[i]!.key !== until) {
      const r = a[i++]!
      if (!after.has(r.key))
        rows.push({ change: "left", key: r.key, sourceMessageId: r.sourceMessageId, before: r.message })
    }
  }
  for (const r of b) {
    const old = before.get(r.key)
    if (old === undefined) {
      rows.push({ change: "entered", key: r.key, sourceMessageId: r.sourceMessageId, after: r.message })
      continue
    }
    flushLeft(r.key)
    if (i < a.length) i++
    const same = JSON.stringify(old.message) === JSON.stringify(r.message)
    const replaced = !same && JSON.stringify(r.message).includes(Render.CLEARED_TEXT)
    rows.push({
      change: same ? "same" : replaced ? "replaced" : "changed",
      key: r.key,
      sourceMessageId: r.sourceMessageId,
      before: old.message,
      after: r.message,
    })
  }
  flushLeft(undefined)
  return rows
}

/** What one pivot did, for its report. */
export interface PivotReport {
  readonly number: number
  readonly markerId: string
  readonly summaryId: string
  readonly auto: boolean
  readonly overflow: boolean
  /** Replay here to see the window right after it, and here for the window just before it was requested. */
  readonly version: number
  readonly before: number
  readonly replaced: { readonly messages: number; readonly tokens: number | undefined; readonly toolOutputs: number }
  readonly tokensAfter: number | undefined
  readonly summary: { readonly text: string; readonly facts: string | undefined }
  /** The summariser's model, or the extractive fallback and why. */
  readonly summariser: { readonly model: string | undefined; readonly fallback: string | undefined }
  /** From the request to the summary, in ms (undefined when a time is missing). */
  readonly durationMs: number | undefined
  readonly tail: ReadonlyArray<string>
  readonly head: ReadonlyArray<string>
  /** Pinned messages the pivot kept verbatim right after the summary (`Pins`), in window order. */
  readonly pinned: ReadonlyArray<string>
  /** What its summary replaced, as `context_recall` lists it for the model (`Recall.dropped`). */
  readonly dropped: Recall.Dropped
}

/** The report of pivot `number` (1-based) of a log whose compaction history is `pivots`. */
export const pivotReport = (
  log: ReadonlyArray<Logged>,
  pivots: ReadonlyArray<CompactionHistory.Entry>,
  number: number,
): PivotReport | undefined => {
  const entry = pivots[number - 1]
  if (entry === undefined || entry.settledVersion === undefined) return undefined
  const head = entry.plan?.head ?? []
  const beforeVersion = Math.max(0, entry.requestedVersion - 1)
  const before = Replay.windowOf(log, beforeVersion)
  let toolOutputs = 0
  for (const id of head) {
    const message = Conversation.get(before.conversation, id)
    if (message?.role === "assistant") for (const part of message.parts) if (part.type === "tool") toolOutputs++
  }
  const settled = log[entry.settledVersion - 1]?.event as { readonly at?: unknown } | undefined
  const finishedAt = typeof settled?.at === "number" ? settled.at : undefined
  return {
    number,
    markerId: entry.markerId,
    summaryId: entry.summaryId ?? "",
    auto: entry.auto,
    overflow: entry.overflow,
    version: entry.settledVersion,
    before: beforeVersion,
    replaced: { messages: head.length, tokens: entry.tokensBefore, toolOutputs },
    tokensAfter: entry.tokensAfter,
    summary: summaryParts(entry.summary ?? ""),
    summariser: {
      model: entry.model === undefined ? undefined : `${entry.model.providerId}/${entry.model.modelId}`,
      fallback: entry.fallback,
    },
    durationMs: finishedAt === undefined ? undefined : finishedAt - entry.requestedAt,
    tail: entry.plan?.tail ?? [],
    head,
    pinned: pinnedAfter(log, entry.settledVersion),
    dropped: Recall.dropped(
      { number, markerId: entry.markerId, summaryId: entry.summaryId ?? entry.markerId, head },
      (id) => Conversation.get(before.conversation, id),
    ),
  }
}

/** The pinned messages in the window right after the event at `version` (a pivot: they follow its summary). */
const pinnedAfter = (log: ReadonlyArray<Logged>, version: number): ReadonlyArray<string> => {
  const after = Replay.windowOf(log, version)
  if (after.pins.length === 0) return []
  const pinned = new Set<string>(after.pins.map((p) => p.messageId))
  return Window.messages(after)
    .map((m) => m.id)
    .filter((id) => pinned.has(id))
}
