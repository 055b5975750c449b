/**
 * A what-if comparison (`WhatIf.Comparison`) as a table: one row per figure, one cell per strategy, as text. The one
 * home of the comparison's labels, formats and legend: `pivot whatif` prints it as columns, and the API's `/whatif`
 * answers it beside the figures for the viewer's strategy comparison.
 *
 * **Example**
 * ```ts
 * for (const row of WhatIfTable.rows(comparison)) console.log(row.label.padEnd(20), row.cells.join("  "))
 * ```
 */
import { Text } from "@pivot/core"
import type { Comparison } from "./WhatIf.ts"

/** One figure across the strategies, in the comparison's order; `detail` rows refine the row above them. */
export interface Row {
  readonly label: string
  readonly cells: ReadonlyArray<string>
  readonly detail: boolean
}

type RunOf = Comparison["runs"][number]

/** A count as text (`12,345`). */
export const num = (n: number): string => Text.thousands(n)

/** `value` against `base` as a signed share (`−12%`, `±0%`, `+3%`); `–` without a base. */
export const change = (value: number, base: number): string => {
  if (base === 0) return "–"
  const percent = Math.round((value / base - 1) * 100)
  return percent === 0 ? "±0%" : `${percent > 0 ? "+" : "−"}${Math.abs(percent)}%`
}

/** `named` of `total`, with its share (`3/4 (75%)`). */
export const share = (named: number, total: number): string =>
  `${num(named)}/${num(total)}${total === 0 ? "" : ` (${Math.round((named / total) * 100)}%)`}`

/** The table's rows: calls, tokens, the bill (against the first strategy), compactions, prunes and retention. */
export const rows = (comparison: Comparison): ReadonlyArray<Row> => {
  const base = comparison.runs[0]
  const row = (label: string, cell: (run: RunOf) => string, detail = false): Row => ({
    label,
    cells: comparison.runs.map(cell),
    detail,
  })
  return [
    row("model calls", (r) => num(r.calls)),
    row("tokens sent", (r) => num(r.sent)),
    row("uncached input", (r) => num(r.billing.input)),
    row("cache reads", (r) => num(r.billing.cacheRead)),
    row("cache writes", (r) => num(r.billing.cacheWrite)),
    row("billed input (eq)", (r) => num(r.billing.billed)),
    row(`vs ${base?.strategy ?? "–"}`, (r) => change(r.billing.billed, base?.billing.billed ?? 0), true),
    row("output tokens", (r) => num(r.billing.output)),
    row("total (eq)", (r) => num(r.billing.cost)),
    ...(comparison.priced
      ? [row("USD", (r) => (r.billing.dollars === undefined ? "–" : `$${r.billing.dollars.toFixed(4)}`))]
      : []),
    row("compactions", (r) => num(r.compactions)),
    row("recorded summary", (r) => num(r.summaries.recorded), true),
    row("pivot's summary", (r) => num(r.summaries.extractive), true),
    row("prunes (outputs)", (r) => `${num(r.prunes)} (${num(r.prunedParts)})`),
    row("calls over window", (r) => num(r.overWindow)),
    row("working set kept", (r) => share(r.workingSet.intact, r.workingSet.calls)),
    row("artifacts in view", (r) => share(r.artifacts.inView, r.artifacts.total)),
    row("without facts", (r) => share(r.artifacts.inViewWithoutFacts, r.artifacts.total), true),
    row("or recallable", (r) => share(r.artifacts.inViewOrRecallable, r.artifacts.total), true),
  ]
}

/** What the figures include, one sentence a line (the same under the CLI's table and the viewer's). */
export const legend: ReadonlyArray<string> = [
  "(eq) = input-token equivalents. A compaction reuses the recorded summary where the strategy summarised the same",
  "messages; elsewhere pivot's deterministic summary, billed as 2,000 output tokens. Artifacts: the session's files,",
  "commands, errors and requests named by the last call's window (\"without facts\": summaries' facts blocks left out;",
  '"or recallable": or by what context_recall gives back at the end: parts behind a pivot, pruned outputs, summaries).',
  "Working set kept: calls whose window held the current turn's request and every output the turn had read, verbatim.",
]
