/** Downsampling a series for a chart: the viewer's one home for it (the timeline's steps, the cost chart's calls). */

/**
 * Items with a `version` (ascending) between `from` and `to` inclusive, at most `max` of them (≥ 2): all when they
 * fit, otherwise the lowest and the highest `value` of each of `max / 2` equal runs, in order, so that peaks and
 * troughs survive.
 */
export const sample = <T extends { readonly version: number }>(
  items: ReadonlyArray<T>,
  from: number,
  to: number,
  max: number,
  value: (item: T) => number,
): Array<T> => {
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (items[mid]!.version < from) lo = mid + 1
    else hi = mid
  }
  let end = lo
  while (end < items.length && items[end]!.version <= to) end++
  const n = end - lo
  if (n <= max) return items.slice(lo, end)
  const buckets = Math.max(1, Math.floor(max / 2))
  const out: Array<T> = []
  for (let b = 0; b < buckets; b++) {
    const start = lo + Math.floor((b * n) / buckets)
    const stop = lo + Math.floor(((b + 1) * n) / buckets)
    let low = items[start]!
    let high = low
    for (let i = start + 1; i < stop; i++) {
      const item = items[i]!
      if (value(item) < value(low)) low = item
      if (value(item) > value(high)) high = item
    }
    if (low === high) out.push(low)
    else if (low.version < high.version) out.push(low, high)
    else out.push(high, low)
  }
  return out
}
