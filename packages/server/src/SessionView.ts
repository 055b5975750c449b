/**
 * What the viewer knows of one session, folded incrementally from its log: the figures the sessions list shows, the
 * usage of every model step (the timeline chart), the marks on it (pivots, prunes, fallbacks, provider overflow
 * errors, manual compactions), and the stream versions of each event type (the filterable event log). Pure: the
 * server feeds it the events it reads, in order, and only the new ones after that.
 */
import { CompactionHistory, Conversation, Events, Pins, type Projection } from "@pivot/core"
import { ReadModels, Replay } from "@pivot/store"
import { sample } from "./Sample.ts"

type Event = Events.Event

/** The usage of one model step: a point of the timeline. */
export interface Step {
  readonly version: number
  readonly messageId: string
  readonly input: number
  /** Cache reads plus cache writes. */
  readonly cache: number
  readonly output: number
  /** The context count the overflow check uses (`Tokens.contextCount`). */
  readonly total: number
}

/** The kinds of marks on the timeline. */
export type MarkKind = ReadModels.Timeline.MarkKind

/** A mark on the timeline: an event worth seeing at a glance. */
export interface Mark {
  readonly kind: MarkKind
  /** The stream version of the event. */
  readonly version: number
  readonly eventId: string
  readonly eventType: string
  /** What the mark names when hovered. */
  readonly label: string
  /** Events it stands for: a prune's consecutive `PartCompacted` events are one mark (one decision), else 1. */
  readonly count: number
}

/** The overflow line: the trigger an `OverflowDetected` event recorded, from its version on. */
export interface Trigger {
  readonly version: number
  readonly tokens: number
}

/** The figures of one session for the sessions list. */
export interface Summary {
  readonly sessionId: string
  readonly title: string | undefined
  readonly events: number
  readonly messages: number
  readonly pivots: number
  readonly prunes: number
  /** The context count of the newest model step, when one reported usage. */
  readonly usage: number | undefined
  /** The newest `at` of its events (ms since the epoch), when any has one. */
  readonly lastActivity: number | undefined
  /** Where the session was forked from, oldest ancestor first (`SessionForked`); empty when it was not forked. */
  readonly lineage: ReadonlyArray<{ readonly session: string; readonly version: number }>
}

/** The folded view of a session (mutable arrays, appended to as events arrive; owned by one `SessionView`). */
export interface State {
  readonly sessionId: string
  version: number
  title: string | undefined
  prunes: number
  lastActivity: number | undefined
  history: CompactionHistory.State
  readonly steps: Array<Step>
  readonly marks: Array<Mark>
  readonly triggers: Array<Trigger>
  /** Stream versions of each event type, ascending. */
  readonly byType: Map<string, Array<number>>
  /** Where each message was first added (its stream version). */
  readonly added: Map<string, number>
  /** The tail each started compaction plans to keep, by marker. */
  readonly tails: Map<string, ReadonlyArray<string>>
  /** The pinned messages in force, by pin key (`Pins.track`). */
  readonly pinned: Map<string, string>
  /** Each finished summary's version and the window fold's origin from then on (`Replay.originOfPivot`). */
  readonly origins: Array<{ readonly version: number; readonly origin: number }>
  /** The sessions it was forked from, oldest first. */
  readonly lineage: Array<{ readonly session: string; readonly version: number }>
}

/** The view of a session before its first event. */
export const make = (sessionId: string): State => ({
  sessionId,
  version: 0,
  title: undefined,
  prunes: 0,
  lastActivity: undefined,
  history: CompactionHistory.initial,
  steps: [],
  marks: [],
  triggers: [],
  byType: new Map(),
  added: new Map(),
  tails: new Map(),
  pinned: new Map(),
  origins: [],
  lineage: [],
})

/** Folds one event (the next of the stream) into the view. */
export const evolve = (state: State, event: Event, meta: Projection.EventMeta): void => {
  state.version = meta.version
  const at = (event as { readonly at?: unknown }).at
  if (typeof at === "number") state.lastActivity = Math.max(state.lastActivity ?? at, at)
  const versions = state.byType.get(event._tag)
  if (versions === undefined) state.byType.set(event._tag, [meta.version])
  else versions.push(meta.version)
  state.history = CompactionHistory.evolve(state.history, event, meta.version)
  Pins.track(state.pinned as Map<string, never>, event as never)
  const message = Conversation.addedMessage(event)
  if (message !== undefined && !state.added.has(message.id)) state.added.set(message.id, meta.version)
  switch (event._tag) {
    case "CompactionStarted":
      state.tails.set(event.markerId, event.plan.tail)
      break
    case "SummaryFinished":
      state.origins.push({
        version: meta.version,
        origin: Replay.originOfPivot(
          (id) => state.added.get(id),
          event.markerId,
          // A pivot also keeps the pinned messages in force.
          [...(state.tails.get(event.markerId) ?? []), ...state.pinned.values()],
        ),
      })
      break
  }
  switch (event._tag) {
    case "SessionStarted":
    case "SessionTitled":
      state.title = Events.title(state.title, event)
      break
    case "SessionForked":
      state.lineage.push({ session: event.parent, version: event.parentVersion })
      break
    case "AssistantStepRecorded": {
      // The step's usage and the marks are read as the timeline read model reads them (their one home).
      const step = ReadModels.Timeline.stepOf(event, meta.version)
      if (step !== undefined) state.steps.push({ ...step, messageId: event.message.id })
      break
    }
    case "PartCompacted":
      state.prunes++
      break
    case "OverflowDetected":
      if (event.trigger !== undefined) state.triggers.push({ version: meta.version, tokens: event.trigger })
      break
  }
  const mark = ReadModels.Timeline.markOf(event)
  if (mark === undefined) return
  const last = state.marks[state.marks.length - 1]
  // One prune clears many outputs in a row: one mark for the run, naming how many.
  if (mark.kind === "prune" && last?.kind === "prune" && last.version + last.count === meta.version) {
    const count = last.count + 1
    state.marks[state.marks.length - 1] = {
      ...last,
      count,
      label: `prune: ${count} tool outputs cleared (versions ${last.version} to ${meta.version})`,
    }
    return
  }
  state.marks.push({ ...mark, version: meta.version, eventId: meta.id, eventType: event._tag, count: 1 })
}

/** The stream version to start the window fold from for the window at `version` (as `Replay.originOf`). */
export const originAt = (state: State, version: number): number => {
  let lo = 0
  let hi = state.origins.length - 1
  let origin = 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const at = state.origins[mid]!
    if (at.version <= version) {
      origin = at.origin
      lo = mid + 1
    } else hi = mid - 1
  }
  return origin
}

/**
 * The steps between versions `from` and `to` (inclusive), at most `max` of them (≥ 2): all when they fit, otherwise
 * the lowest and the highest context of each of `max / 2` equal runs, in order, so that peaks and troughs survive.
 */
export const stepsBetween = (steps: ReadonlyArray<Step>, from: number, to: number, max: number): Array<Step> =>
  sample(steps, from, to, max, (step) => step.total)

/** The timeline chart's columns: one x per point (a stream version), each series aligned with it. */
export interface Chart {
  readonly version: ReadonlyArray<number>
  readonly total: ReadonlyArray<number | null>
  readonly input: ReadonlyArray<number | null>
  readonly cache: ReadonlyArray<number | null>
  readonly output: ReadonlyArray<number | null>
  /** The overflow line: the trigger in effect at each version (null when no trigger was ever recorded). */
  readonly overflow: ReadonlyArray<number | null>
}

/**
 * The chart of versions `from` to `to` from its model steps (`stepsBetween`) and the recorded triggers. The x axis
 * spans the whole range: when no step stands at `from` or `to`, a row with no usage is added there, so that marks
 * after the last step (a pivot that ends a session) are on the axis, and the overflow line runs from edge to edge.
 * A trigger is recorded only when an overflow is detected, but it follows from the model's limits and the compaction
 * config, which a session keeps: before the first recorded one, the line shows that first trigger.
 */
export const chart = (
  steps: ReadonlyArray<Step>,
  triggers: ReadonlyArray<Trigger>,
  from: number,
  to: number,
): Chart => {
  const rows: Array<Step | number> = []
  if (steps.length === 0 || steps[0]!.version > from) rows.push(from)
  rows.push(...steps)
  const last = steps[steps.length - 1]
  if ((last === undefined || last.version < to) && to > from) rows.push(to)
  const version = rows.map((r) => (typeof r === "number" ? r : r.version))
  const column = (pick: (step: Step) => number) => rows.map((r) => (typeof r === "number" ? null : pick(r)))
  const overflow: Array<number | null> = []
  let t = 0
  let current: number | null = triggers[0]?.tokens ?? null
  for (const v of version) {
    while (t < triggers.length && triggers[t]!.version <= v) current = triggers[t++]!.tokens
    overflow.push(current)
  }
  return {
    version,
    total: column((s) => s.total),
    input: column((s) => s.input),
    cache: column((s) => s.cache),
    output: column((s) => s.output),
    overflow,
  }
}

/** Events per mark kind, as the legend counts them: a prune's run of cleared outputs counts each output. */
export const legend = (marks: ReadonlyArray<Mark>): Record<MarkKind, number> => {
  const counts: Record<MarkKind, number> = {
    pivot: 0,
    prune: 0,
    fallback: 0,
    "provider-overflow": 0,
    "manual-compaction": 0,
  }
  for (const mark of marks) counts[mark.kind] += mark.count
  return counts
}

/** The session's compactions that formed a pivot, oldest first. */
export const pivots = (state: State): ReadonlyArray<CompactionHistory.Entry> => CompactionHistory.pivots(state.history)

/** The figures for the sessions list. */
export const summary = (state: State): Summary => ({
  sessionId: state.sessionId,
  title: state.title,
  events: state.version,
  // Every stored message (markers, summaries and continues too), as `pivot inspect` and `pivot import` count them.
  messages: state.added.size,
  pivots: pivots(state).length,
  prunes: state.prunes,
  usage: state.steps[state.steps.length - 1]?.total,
  lastActivity: state.lastActivity,
  lineage: state.lineage,
})
