// Garbage-collection pauses inside timed sections, for bench:peers (issue 23): V8 reports every pause as a `gc`
// performance entry on the same clock as `performance.now()`, so a pause is charged to a section it overlaps.
import { type PerformanceEntry, PerformanceObserver } from "node:perf_hooks"

/** What the collector took inside one contender's timed sections. */
export interface GcInside {
  /** Timed sections. */
  readonly sections: number
  /** Sections with at least one pause inside. */
  readonly hit: number
  /** Pauses inside (a pause that straddles a section's edge counts). */
  readonly pauses: number
  /** Of which major (mark-compact). */
  readonly major: number
  /** Pause time inside the sections (only the overlapping part), µs. */
  readonly micros: number
  /** The sections' own time, µs, to read `micros` against. */
  readonly timed: number
}

const MAJOR = 2 // perf_hooks.constants.NODE_PERFORMANCE_GC_MAJOR

export const gcWatch = () => {
  const pauses: Array<{ readonly start: number; readonly end: number; readonly kind: number }> = []
  const take = (list: ReadonlyArray<PerformanceEntry>) => {
    for (const e of list)
      pauses.push({
        start: e.startTime,
        end: e.startTime + e.duration,
        kind: (e as { readonly detail?: { readonly kind?: number } }).detail?.kind ?? 0,
      })
  }
  const observer = new PerformanceObserver((list) => take(list.getEntries()))
  observer.observe({ entryTypes: ["gc"] })
  const sections = new Map<string, Array<readonly [number, number]>>()
  return {
    /** Charges the pauses between `t0` and `t1` (`performance.now()` ms) to `who`. */
    section: (who: string, t0: number, t1: number) => {
      const list = sections.get(who)
      if (list === undefined) sections.set(who, [[t0, t1]])
      else list.push([t0, t1])
    },
    /** The pauses inside each contender's sections since the last `reset`. */
    report: (): Map<string, GcInside> => {
      take(observer.takeRecords())
      const out = new Map<string, GcInside>()
      for (const [who, list] of sections) {
        let hit = 0
        let count = 0
        let major = 0
        let micros = 0
        let timed = 0
        for (const [t0, t1] of list) {
          timed += (t1 - t0) * 1000
          let inside = 0
          for (const p of pauses) {
            const overlap = Math.min(t1, p.end) - Math.max(t0, p.start)
            if (overlap <= 0) continue
            inside++
            if (p.kind === MAJOR) major++
            micros += overlap * 1000
          }
          if (inside > 0) hit++
          count += inside
        }
        out.set(who, { sections: list.length, hit, pauses: count, major, micros, timed })
      }
      return out
    },
    reset: () => {
      take(observer.takeRecords())
      pauses.length = 0
      sections.clear()
    },
    stop: () => observer.disconnect(),
  }
}
