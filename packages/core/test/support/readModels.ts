/**
 * Reference models of the read models, written apart from their `evolve` code: each answers from the whole event
 * list at once (find the last call, pair each request with what followed it) instead of folding event by event.
 * The read-model tests, in core and in the SQL store, compare against these.
 */
import type { Events, Ids, Tokens } from "@pivot/core"

type Event = Events.Event

/** The context a call used (spec §2.4), restated: the provider total when non-zero, else input + output + cache. */
const contextOf = (t: Tokens.TokenUsage): number => t.total || t.input + t.output + t.cacheRead + t.cacheWrite

/** Indices of the model calls that measured the context: non-summary steps that reported usage. */
const callsOf = (events: ReadonlyArray<Event>): ReadonlyArray<number> =>
  events.flatMap((e, i) =>
    e._tag === "AssistantStepRecorded" && e.message.summary !== true && contextOf(e.message.tokens) > 0 ? [i] : [],
  )

const lastIndexOf = (events: ReadonlyArray<Event>, tags: ReadonlyArray<Event["_tag"]>): number =>
  events.findLastIndex((e) => tags.includes(e._tag))

/** The tool call that asked for the compaction open at index `at`: the newest request by the model since it opened. */
const askedAt = (events: ReadonlyArray<Event>, at: number): string | undefined => {
  const before = events.slice(0, at)
  const opened = lastIndexOf(before, ["CompactionRequested", "SummaryFinished", "SummaryFailed"])
  const asked = before
    .slice(opened + 1)
    .findLast((e) => e._tag === "CompactionRequestedByModel" && e.callId !== undefined)
  return asked?._tag === "CompactionRequestedByModel" ? asked.callId : undefined
}

/**
 * What the usage read model should hold: the last call, what made its count stale (a pivot after it, or one its own
 * tool call asked for since the call before it; else a prune after it), whether a compaction is open.
 */
export const usage = (events: ReadonlyArray<Event>) => {
  const calls = callsOf(events)
  const last = calls.at(-1)
  const step = last === undefined ? undefined : events[last]
  const pivot = lastIndexOf(events, ["SummaryFinished"])
  const askedForPivot = pivot < 0 ? undefined : askedAt(events, pivot)
  const carriesAsk =
    step?._tag === "AssistantStepRecorded" &&
    pivot < last! &&
    pivot > (calls.at(-2) ?? -1) &&
    askedForPivot !== undefined &&
    step.message.parts.some((p) => p.type === "tool" && p.callId === askedForPivot)
  const pruned = last !== undefined && events.slice(last + 1).some((e) => e._tag === "PartCompacted")
  return {
    lastCall:
      step?._tag === "AssistantStepRecorded"
        ? { messageId: step.message.id, tokens: contextOf(step.message.tokens), at: step.at }
        : undefined,
    stale: last === undefined ? undefined : pivot > last || carriesAsk ? "pivot" : pruned ? "prune" : undefined,
    compacting:
      lastIndexOf(events, ["CompactionRequested"]) > lastIndexOf(events, ["SummaryFinished", "SummaryFailed"]),
    calls: calls.length,
    askedBy: askedAt(events, events.length),
    pivotAskedBy: pivot > (last ?? -1) ? askedForPivot : undefined,
  }
}

/** What the prune index should hold: one entry per `PartCompacted`, with its event's id and version. */
export const pruned = (events: ReadonlyArray<Event>, idOf: (version: number) => string) => {
  const entries = events.flatMap((e, i) =>
    e._tag === "PartCompacted"
      ? [{ messageId: e.messageId, partId: e.partId, tokens: e.tokens, at: e.at, eventId: idOf(i + 1), version: i + 1 }]
      : [],
  )
  return { entries, tokensFreed: entries.reduce((sum, e) => sum + e.tokens, 0) }
}

/** The core of one compaction-history entry: how the compaction stands and the tokens around it. */
export interface CompactionFacts {
  readonly markerId: Ids.MessageId
  readonly status: "requested" | "started" | "finished" | "failed" | "continued"
  readonly summaryId: Ids.MessageId | undefined
  readonly tokensBefore: number | undefined
  readonly tokensAfter: number | undefined
}

/** What the compaction history should say of each compaction, in request order. */
export const compactions = (events: ReadonlyArray<Event>): ReadonlyArray<CompactionFacts> => {
  const calls = callsOf(events)
  const tokensAt = (i: number | undefined) => {
    const e = i === undefined ? undefined : events[i]
    return e?._tag === "AssistantStepRecorded" ? contextOf(e.message.tokens) : undefined
  }
  return events.flatMap((request, r) => {
    if (request._tag !== "CompactionRequested") return []
    const markerId = request.marker.id
    const about = (e: Event) => "markerId" in e && e.markerId === markerId
    const later = events.map((e, i) => ({ e, i })).filter(({ e, i }) => i > r && about(e))
    const has = (tag: Event["_tag"]) => later.find(({ e }) => e._tag === tag)
    const started = has("CompactionStarted")
    const finished = has("SummaryFinished")
    const status =
      has("ContinueRequested") || has("TurnReplayed")
        ? "continued"
        : finished
          ? "finished"
          : has("SummaryFailed")
            ? "failed"
            : started
              ? "started"
              : "requested"
    return [
      {
        markerId,
        status,
        summaryId: started?.e._tag === "CompactionStarted" ? started.e.summaryId : undefined,
        tokensBefore: tokensAt(calls.filter((i) => i < r).at(-1)),
        // The first call after the pivot, unless another compaction was requested before any call came.
        tokensAfter:
          finished === undefined
            ? undefined
            : tokensAt(
                calls.find(
                  (i) => i > finished.i && !events.slice(finished.i, i).some((e) => e._tag === "CompactionRequested"),
                ),
              ),
      },
    ]
  })
}
