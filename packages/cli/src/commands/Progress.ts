/**
 * Progress of long work on standard error: on a terminal a redrawn bar with counts and rate
 * (`import [████░░░░] 12,000/20,001 events · 9,850/s`); otherwise a plain line at most once per `every` ms and one
 * when done. Only when the `Io` asks for it (`progress`), so output captured by tests and pipes stays the same.
 */
import type { Io } from "./Command.ts"
import { num } from "./Text.ts"

/** A running progress report. */
export interface Progress {
  /** Counts `n` more units done. */
  readonly advance: (n: number) => void
  /** Sets the total when it becomes known. */
  readonly total: (total: number) => void
  /** Ends the report (the last line stays). */
  readonly done: () => void
}

/** A progress report that prints nothing. */
export const silent: Progress = { advance: () => {}, total: () => {}, done: () => {} }

const BAR = 24

/** One progress line: label, bar (when the total is known and `bar`), counts, rate. Pure. */
export const line = (
  label: string,
  unit: string,
  done: number,
  total: number | undefined,
  elapsedMs: number,
  bar: boolean,
): string => {
  const rate = elapsedMs > 0 ? `${num((done * 1000) / elapsedMs)}/s` : "…"
  const counts = total === undefined ? `${num(done)} ${unit}` : `${num(done)}/${num(total)} ${unit}`
  if (!bar || total === undefined || total === 0) return `${label} ${counts} · ${rate}`
  const filled = Math.min(BAR, Math.round((done / total) * BAR))
  return `${label} [${"█".repeat(filled)}${"░".repeat(BAR - filled)}] ${counts} · ${rate}`
}

/** Starts a progress report of `label` counting `unit`s (e.g. "events"). */
export const start = (
  io: Io,
  label: string,
  unit: string,
  options: { readonly total?: number | undefined; readonly every?: number; readonly now?: () => number } = {},
): Progress => {
  if (io.progress !== true) return silent
  const now = options.now ?? (() => performance.now())
  const tty = io.errIsTTY === true && io.errRewrite !== undefined
  const every = options.every ?? (tty ? 100 : 2000)
  const began = now()
  let last = began
  let count = 0
  let total = options.total
  let printed = false
  let printedCount = -1
  const print = (final: boolean) => {
    const text = line(label, unit, count, total, now() - began, tty)
    if (tty) io.errRewrite!(final ? `${text}\n` : text)
    else io.err(text)
    printed = true
    printedCount = count
  }
  return {
    advance: (n) => {
      count += n
      const t = now()
      if (t - last >= every) {
        last = t
        print(false)
      }
    },
    total: (n) => {
      total = n
    },
    done: () => {
      // The last line shows the final count: printed unless it already is the last thing printed.
      if (tty || (printed && printedCount !== count)) print(true)
    },
  }
}
