/**
 * What the pages ask of a session's ledger, instead of the whole of it (at 100k events the whole ledger is ~17 MB of
 * JSON): the cost chart (the session's totals, each model step's billed input and stable prefix at most `max` points,
 * and where each compaction and prune entry stands), and the entries of a version range or of one pivot. Pure
 * functions of the ledger's view (`totals`, `entries`, `calls`).
 */
import type { Ledger } from "@pivot/core"
import { sample } from "./Sample.ts"

/** A session's ledger as the API answers it. */
export interface View {
  readonly totals: Ledger.Totals
  readonly entries: ReadonlyArray<Ledger.Entry>
  readonly calls: ReadonlyArray<Ledger.Call>
}

/** Points of the cost chart per answer, at most (as the timeline's). */
export const CHART_POINTS = 4_000

/** Entries per answer of `entries`, at most. */
export const MAX_ENTRIES = 200

/** The cost chart of versions `from` to `to`: what the session page draws from the ledger. */
export interface Chart {
  readonly totals: Ledger.Totals
  /** Model steps (calls of kind `step`) in the range. */
  readonly steps: number
  /** The steps drawn (all, or sampled to `CHART_POINTS`), as columns. */
  readonly calls: {
    readonly version: ReadonlyArray<number>
    readonly billed: ReadonlyArray<number>
    readonly stablePrefix: ReadonlyArray<number>
  }
  /** Every entry of the range, as columns: its version, kind and (for a compaction) its marker. */
  readonly marks: {
    readonly version: ReadonlyArray<number>
    readonly kind: ReadonlyArray<"compaction" | "prune">
    readonly markerId: ReadonlyArray<string | null>
  }
}

/** The cost chart between `from` and `to`, its calls at most `max` points (billed input's peaks kept). */
export const chart = (view: View, from: number, to: number, max = CHART_POINTS): Chart => {
  const steps = view.calls.filter((c) => c.kind === "step" && c.version >= from && c.version <= to)
  const drawn = sample(steps, from, to, max, (c) => c.billed)
  const marked = view.entries.filter((e) => e.version >= from && e.version <= to)
  return {
    totals: view.totals,
    steps: steps.length,
    calls: {
      version: drawn.map((c) => c.version),
      billed: drawn.map((c) => c.billed),
      stablePrefix: drawn.map((c) => c.stablePrefix),
    },
    marks: {
      version: marked.map((e) => e.version),
      kind: marked.map((e) => e.kind),
      markerId: marked.map((e) => e.markerId ?? null),
    },
  }
}

/** Which entries to answer: a version range, a kind, one compaction's marker; at most `limit`, from `offset`. */
export interface EntryQuery {
  readonly from: number
  readonly to: number
  readonly kind?: "compaction" | "prune" | undefined
  readonly markerId?: string | undefined
  readonly offset: number
  readonly limit: number
}

/** The entries a query selects (`total` of them), `limit` of them from `offset`, in the ledger's order. */
export const entries = (
  view: View,
  query: EntryQuery,
): { readonly total: number; readonly entries: ReadonlyArray<Ledger.Entry> } => {
  const selected = view.entries.filter(
    (e) =>
      e.version >= query.from &&
      e.version <= query.to &&
      (query.kind === undefined || e.kind === query.kind) &&
      (query.markerId === undefined || e.markerId === query.markerId),
  )
  return { total: selected.length, entries: selected.slice(query.offset, query.offset + query.limit) }
}
