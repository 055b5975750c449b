// OpenCode's two memory steps (bench:opencode --startup): one home for where a round's peaks split.

/** The least gap between two peaks (MB) that says they are on different steps; the steps are ~90 MB apart. */
export const STEP_GAP_MB = 30

/**
 * OpenCode's peak memory sits on one of two steps ~90 MB apart, whichever plugin it loads (docs/benchmarks.md, "The
 * hooks on a worker thread"): a variant's peaks split at their widest gap, when that gap is over `STEP_GAP_MB`, into the runs
 * on the lower step and those on the upper one. Step against step is what a plugin adds; a round's median also says
 * how its runs happened to fall.
 */
export const memorySteps = (peaksMb: ReadonlyArray<number>): { lower: Array<number>; upper: Array<number> } => {
  const sorted = [...peaksMb].sort((a, b) => a - b)
  let gap = STEP_GAP_MB
  let at = Number.POSITIVE_INFINITY
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]! - sorted[i - 1]! > gap) [gap, at] = [sorted[i]! - sorted[i - 1]!, (sorted[i]! + sorted[i - 1]!) / 2]
  return { lower: sorted.filter((x) => x < at), upper: sorted.filter((x) => x >= at) }
}
