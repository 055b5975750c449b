/**
 * Per-phase counters of the plugin's own work, for `npm run bench:opencode -- --startup` (ADR 0056): the wall time
 * and the process's CPU time (`process.cpuUsage`, user + system, every thread) of a phase — the hooks' bundle
 * evaluated, the store opened, a sync's read of the session and its recording, the HUD's reads. Off unless the
 * process holds a sink (`globalThis[Symbol.for("pivot.phases")]`, an array the bench's timing wrapper puts there):
 * then each phase pushes one record to it. Without a sink a phase costs one property read.
 *
 * A phase's CPU is the whole process's during it: for a phase that runs without yielding (evaluating the bundle,
 * SQLite's synchronous calls) it is the phase's own; for one that awaits (a read of the session through OpenCode's
 * server) it also holds OpenCode's work meanwhile — its serving of that read, and whatever else ran.
 */

/** One phase as recorded: its name, when it began (epoch ms), its wall time and the process's CPU meanwhile (ms). */
export interface Phase {
  readonly name: string
  readonly at: number
  readonly ms: number
  readonly cpuMs: number
}

/** Where the bench's wrapper puts the array phases are pushed to. */
export const SINK = Symbol.for("pivot.phases")

const sink = (): Array<Phase> | undefined => {
  const found = (globalThis as { [SINK]?: unknown })[SINK]
  return Array.isArray(found) ? (found as Array<Phase>) : undefined
}

const cpuMs = () => {
  const used = process.cpuUsage()
  return (used.user + used.system) / 1000
}

/** Runs `body`, recording it as phase `name` when a sink is there. */
export const timed = <A>(name: string, body: () => Promise<A>): Promise<A> => {
  const out = sink()
  if (out === undefined) return body()
  const at = performance.timeOrigin + performance.now()
  const cpu = cpuMs()
  const done = () => {
    out.push({ name, at, ms: performance.timeOrigin + performance.now() - at, cpuMs: cpuMs() - cpu })
  }
  return body().finally(done)
}
