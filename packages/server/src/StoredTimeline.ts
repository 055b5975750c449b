/**
 * The session page's first answers from the store's timeline read model (ADR 0057) instead of a fold of the log: the
 * session's figures, its pivots and event types, and the timeline as bands (each bucket's lowest and highest model
 * step), its marks (every pivot, fallback, provider overflow and manual compaction; prunes one per bucket) and legend.
 * Pure: the catalog reads the rows (`ReadModels.timeline`), these functions shape them.
 */
import { CompactionHistory } from "@pivot/core"
import type { ReadModels } from "@pivot/store"
import type * as SessionView from "./SessionView.ts"

type Stored = ReadModels.StoredTimeline
type Bucket = Stored["buckets"][number]

/** The figures for the sessions list, as `SessionView.summary` gives them from the fold. */
export const summary = (sessionId: string, stored: Stored): SessionView.Summary => {
  let title: string | undefined
  let messages = 0
  let prunes = 0
  let usage: number | undefined
  let lastActivity: number | undefined
  const lineage: Array<{ readonly session: string; readonly version: number }> = []
  for (const b of stored.buckets) {
    if (b.titled) title = b.title ?? undefined
    messages += b.messages
    prunes += b.prunes
    if (b.lastStep !== null) usage = b.lastStep.total
    if (b.lastActivity !== null) lastActivity = Math.max(lastActivity ?? b.lastActivity, b.lastActivity)
    lineage.push(...b.lineage)
  }
  return {
    sessionId,
    title,
    events: stored.head,
    messages,
    pivots: pivots(stored).length,
    prunes,
    usage,
    lastActivity,
    lineage,
  }
}

/** The session's compactions that formed a pivot, oldest first (as `SessionView.pivots`). */
export const pivots = (stored: Stored): ReadonlyArray<CompactionHistory.Entry> =>
  CompactionHistory.pivots({ entries: stored.compactions, lastCallTokens: undefined })

/** Events per type, in the order each type first appears. */
export const types = (stored: Stored): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const b of stored.buckets)
    for (const [type, n] of Object.entries(b.types)) counts[type] = (counts[type] ?? 0) + n
  return counts
}

/** Model steps in the session. */
export const stepCount = (stored: Stored): number => {
  let n = 0
  for (const b of stored.buckets) n += b.steps
  return n
}

/**
 * The bands: the buckets merged into at most `max / 2` runs of equal length, each run's lowest and highest step in
 * version order (one when they are the same step), as `Sample.sample` keeps peaks and troughs.
 */
export const bands = (buckets: ReadonlyArray<Bucket>, max: number): Array<SessionView.Step> => {
  const withSteps = buckets.filter((b) => b.low !== null && b.high !== null)
  const runs = Math.max(1, Math.min(withSteps.length, Math.floor(max / 2)))
  const out: Array<SessionView.Step> = []
  for (let r = 0; r < runs; r++) {
    const start = Math.floor((r * withSteps.length) / runs)
    const stop = Math.floor(((r + 1) * withSteps.length) / runs)
    let low = withSteps[start]!.low!
    let high = withSteps[start]!.high!
    for (let i = start + 1; i < stop; i++) {
      const b = withSteps[i]!
      if (b.low!.total < low.total) low = b.low!
      if (b.high!.total > high.total) high = b.high!
    }
    const step = (s: typeof low): SessionView.Step => ({ ...s, messageId: "" })
    if (low.version === high.version) out.push(step(low))
    else if (low.version < high.version) out.push(step(low), step(high))
    else out.push(step(high), step(low))
  }
  return out
}

/** The marks: each non-prune mark as the fold has it, and one prune mark per bucket standing for its prunes. */
export const marks = (buckets: ReadonlyArray<Bucket>): Array<SessionView.Mark> => {
  const out: Array<SessionView.Mark> = []
  for (const b of buckets) {
    const inBucket: Array<SessionView.Mark> = b.marks.map((m) => ({ ...m, count: 1 }))
    if (b.firstPrune !== null)
      inBucket.push({
        kind: "prune",
        version: b.firstPrune,
        eventId: "",
        eventType: "PartCompacted",
        label: `prune: ${b.prunes} tool outputs cleared between versions ${b.firstPrune} and ${b.last}`,
        count: b.prunes,
      })
    inBucket.sort((x, y) => x.version - y.version)
    out.push(...inBucket)
  }
  return out
}

/** Events per mark kind, as `SessionView.legend` counts them (a prune counts each output it cleared). */
export const legend = (buckets: ReadonlyArray<Bucket>): Record<SessionView.MarkKind, number> => {
  const counts: Record<SessionView.MarkKind, number> = {
    pivot: 0,
    prune: 0,
    fallback: 0,
    "provider-overflow": 0,
    "manual-compaction": 0,
  }
  for (const b of buckets) {
    counts.prune += b.prunes
    for (const m of b.marks) counts[m.kind]++
  }
  return counts
}

/** The overflow triggers recorded, oldest first. */
export const triggers = (buckets: ReadonlyArray<Bucket>): Array<SessionView.Trigger> =>
  buckets.flatMap((b) => b.triggers)
