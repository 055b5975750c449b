/** Small text helpers for the audit commands' human output: numbers, one-line excerpts, aligned columns. */
import { type Events, Text } from "@pivot/core"

/** A count with thousands separators: `12,345`. */
export const num = (n: number): string => Text.thousands(n)

/** Text on one line (whitespace runs collapsed), cut to `max` characters with an ellipsis. */
export const excerpt = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`
}

/** Rows of cells as aligned columns (the last column is not padded). */
export const columns = (rows: ReadonlyArray<ReadonlyArray<string>>, indent = "  "): Array<string> => {
  const widths: Array<number> = []
  for (const row of rows)
    for (const [i, cell] of row.entries()) if (i < row.length - 1) widths[i] = Math.max(widths[i] ?? 0, cell.length)
  return rows.map((row) =>
    (indent + row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]!) : cell)).join("  ")).trimEnd(),
  )
}

/** How many events of each type, most frequent first (ties in catalog order of first appearance). */
export const countByType = (events: Iterable<Events.Event>): Array<readonly [string, number]> => {
  const counts = new Map<string, number>()
  for (const event of events) counts.set(event._tag, (counts.get(event._tag) ?? 0) + 1)
  return [...counts.entries()].sort((a, b) => b[1] - a[1])
}

/** "1 event" / "2 events". */
export const plural = (n: number, word: string): string => `${num(n)} ${word}${n === 1 ? "" : "s"}`
