/** Crash tests' checks: what a killed writer acknowledged against what the store holds afterwards. */
import { expect } from "vitest"
import type { RecordedEvent } from "../../src/index.ts"

/** One acknowledged append: the stream version it reached, its batch id and its size. */
export interface Ack {
  readonly version: number
  readonly batch: string
  readonly size: number
}

/** A small deterministic generator, so a failing run can be replayed from its seed. */
export const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Everything acknowledged is there, versions have no gaps, ids are unique, and every batch is whole. */
export const verify = (events: ReadonlyArray<RecordedEvent>, acked: ReadonlyArray<Ack>) => {
  expect(events.map((e) => e.streamVersion)).toEqual(events.map((_, i) => i + 1))
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length)
  for (const ack of acked) {
    expect(ack.version).toBeLessThanOrEqual(events.length)
    expect(events[ack.version - 1]!.id).toBe(`${ack.batch}-${ack.size - 1}`)
  }
  const batches = new Map<string, Array<{ k: number; size: number }>>()
  for (const event of events) {
    const data = event.data as { batch: string; size: number; k: number }
    batches.set(data.batch, [...(batches.get(data.batch) ?? []), { k: data.k, size: data.size }])
  }
  for (const [, parts] of batches) {
    expect(parts.map((p) => p.k)).toEqual(Array.from({ length: parts[0]!.size }, (_, k) => k))
  }
  return batches.size
}
