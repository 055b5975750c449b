/**
 * The timeline read model's fold (ADR 0057; its table and rows in `timeline.ts`): what the viewer's session page draws first, as one row per bucket of `SIZE`
 * stream versions (`pivot_rm_timeline`): the bucket's event counts by type, new messages, its model steps' lowest,
 * highest and last context, its prunes, marks (pivots, fallbacks, provider overflow errors, manual compactions),
 * overflow triggers, title, lineage and last activity. Append-only: an append writes the rows of the buckets its events
 * fall in (the newest one, or a few), never an older one, so a session's first render reads O(buckets) rows and never
 * folds its log. Each bucket is a function of its own events (and whether a message or a prune run is new), so any
 * split of the log into batches writes the same rows as one fold of the whole log.
 */
import { Conversation, Events, type Projection, Tokens } from "@pivot/core"

type Event = Events.Event

/** Stream versions per bucket (row). 500 rows at 100k events; the server merges them into at most its bands. */
export const SIZE = 200

/** The usage of one model step. */
export interface Step {
  readonly version: number
  readonly input: number
  /** Cache reads plus cache writes. */
  readonly cache: number
  readonly output: number
  /** The context count the overflow check uses (`Tokens.contextCount`). */
  readonly total: number
}

/** The kinds of marks on the timeline. */
export type MarkKind = "pivot" | "prune" | "fallback" | "provider-overflow" | "manual-compaction"

/** A mark's kind and what it names when hovered (the one home of the marks' rule; the viewer's fold uses it too). */
export const markOf = (event: Event): { readonly kind: MarkKind; readonly label: string } | undefined => {
  switch (event._tag) {
    case "SummaryFinished":
      return { kind: "pivot", label: `pivot: summary ${event.summary.id} replaces the head (marker ${event.markerId})` }
    case "PartCompacted":
      return {
        kind: "prune",
        label: `prune: tool ${event.target ?? "output"} ${event.partId} of ${event.messageId} cleared`,
      }
    case "SummaryFallbackUsed":
      return { kind: "fallback", label: `fallback: extractive summary for ${event.markerId} (${event.reason})` }
    case "ProviderErrorReported":
      return event.overflow
        ? { kind: "provider-overflow", label: `provider overflow error: ${event.error.name} on ${event.message.id}` }
        : undefined
    case "CompactionRequested": {
      const part = event.marker.parts.find((p) => p.type === "compaction")
      return part !== undefined && part.type === "compaction" && part.auto === false
        ? { kind: "manual-compaction", label: `manual compaction requested (marker ${event.marker.id})` }
        : undefined
    }
    default:
      return undefined
  }
}

/** A step's usage, when the event is a model step that reported some (summaries' steps are not the session's). */
export const stepOf = (event: Event, version: number): Step | undefined => {
  if (event._tag !== "AssistantStepRecorded" || event.message.summary === true) return undefined
  const tokens = event.message.tokens
  const total = Tokens.contextCount(tokens)
  return total > 0
    ? { version, input: tokens.input, cache: tokens.cacheRead + tokens.cacheWrite, output: tokens.output, total }
    : undefined
}

/** A mark other than a prune (prunes are counted per bucket, not listed: thousands at 100k events). */
export interface Mark {
  readonly kind: Exclude<MarkKind, "prune">
  readonly version: number
  readonly eventId: string
  readonly eventType: string
  readonly label: string
}

/** One bucket: the events of stream versions `bucket · SIZE + 1` to `(bucket + 1) · SIZE` folded so far. */
export interface Bucket {
  readonly bucket: number
  /** The newest stream version folded into it. */
  readonly last: number
  /** Events folded (foreign events, skipped by the decoder, are not). */
  readonly events: number
  readonly types: Readonly<Record<string, number>>
  /** Messages added for the first time. */
  readonly messages: number
  /** Model steps that reported usage, and the lowest, highest (the first of equals) and newest of them. */
  readonly steps: number
  readonly low: Step | null
  readonly high: Step | null
  readonly lastStep: Step | null
  /** `PartCompacted` events, the prune marks (runs of consecutive ones) that start here, and the first one's version. */
  readonly prunes: number
  readonly pruneRuns: number
  readonly firstPrune: number | null
  readonly marks: ReadonlyArray<Mark>
  /** The overflow triggers `OverflowDetected` recorded. */
  readonly triggers: ReadonlyArray<{ readonly version: number; readonly tokens: number }>
  /** The title in force after its events, when one of them set it (`titled`). */
  readonly titled: boolean
  readonly title: string | null
  readonly lastActivity: number | null
  readonly lineage: ReadonlyArray<{ readonly session: string; readonly version: number }>
}

/** The model's state: the buckets closed (placeholders in a state resumed from a snapshot), the open one. */
export interface State {
  readonly closed: ReadonlyArray<Bucket>
  readonly open: Bucket | undefined
  /** The version of the newest `PartCompacted` event (0: none), to know whether the next one continues its run. */
  readonly lastPrune: number
}

export const initial: State = { closed: [], open: undefined, lastPrune: 0 }

const emptyBucket = (bucket: number): Bucket => ({
  bucket,
  last: 0,
  events: 0,
  types: {},
  messages: 0,
  steps: 0,
  low: null,
  high: null,
  lastStep: null,
  prunes: 0,
  pruneRuns: 0,
  firstPrune: null,
  marks: [],
  triggers: [],
  titled: false,
  title: null,
  lastActivity: null,
  lineage: [],
})

/** The bucket of a stream version. */
export const bucketOf = (version: number): number => Math.floor((version - 1) / SIZE)

/**
 * Folds one event; `newMessage` says whether it adds a message the session never had (the caller's conversation knows).
 */
export const evolve = (state: State, event: Event, meta: Projection.EventMeta, newMessage: boolean): State => {
  const index = bucketOf(meta.version)
  let closed = state.closed
  let b = state.open
  if (b === undefined || b.bucket !== index) {
    if (b !== undefined) closed = [...closed, b]
    b = emptyBucket(index)
  }
  const step = stepOf(event, meta.version)
  const mark = markOf(event)
  const at = (event as { readonly at?: unknown }).at
  const prune = event._tag === "PartCompacted"
  const next: Bucket = {
    bucket: index,
    last: meta.version,
    events: b.events + 1,
    types: { ...b.types, [event._tag]: (b.types[event._tag] ?? 0) + 1 },
    messages: b.messages + (newMessage ? 1 : 0),
    steps: b.steps + (step === undefined ? 0 : 1),
    low: step !== undefined && (b.low === null || step.total < b.low.total) ? step : b.low,
    high: step !== undefined && (b.high === null || step.total > b.high.total) ? step : b.high,
    lastStep: step ?? b.lastStep,
    prunes: b.prunes + (prune ? 1 : 0),
    // A prune continues a run when the event before it was one too (`SessionView`'s one mark per run).
    pruneRuns: b.pruneRuns + (prune && state.lastPrune !== meta.version - 1 ? 1 : 0),
    firstPrune: prune && b.firstPrune === null ? meta.version : b.firstPrune,
    marks:
      mark === undefined || mark.kind === "prune"
        ? b.marks
        : [
            ...b.marks,
            {
              kind: mark.kind,
              version: meta.version,
              eventId: meta.id,
              eventType: event._tag,
              label: mark.label,
            },
          ],
    triggers:
      event._tag === "OverflowDetected" && event.trigger !== undefined
        ? [...b.triggers, { version: meta.version, tokens: event.trigger }]
        : b.triggers,
    titled: b.titled || event._tag === "SessionStarted" || event._tag === "SessionTitled",
    title:
      event._tag === "SessionStarted" || event._tag === "SessionTitled"
        ? (Events.title(b.title ?? undefined, event) ?? null)
        : b.title,
    lastActivity: typeof at === "number" ? Math.max(b.lastActivity ?? at, at) : b.lastActivity,
    lineage:
      event._tag === "SessionForked"
        ? [...b.lineage, { session: event.parent, version: event.parentVersion }]
        : b.lineage,
  }
  return { closed, open: next, lastPrune: prune ? meta.version : state.lastPrune }
}

/** Whether an event adds a message the conversation does not hold yet. */
export const addsNew = (conversation: Conversation.State, event: Event): boolean => {
  const message = Conversation.addedMessage(event)
  return message !== undefined && !Conversation.has(conversation, message.id)
}

/** Every bucket of a whole state, oldest first. */
export const buckets = (state: State): ReadonlyArray<Bucket> =>
  state.open === undefined ? state.closed : [...state.closed, state.open]
