/**
 * The timeline read model (ADR 0057) against an independent reference: rows written by the writer's own path for any
 * split of a session's log into batches, across two processes (the second resumes from the read models' snapshot),
 * equal the buckets made from one fold of the whole log by the viewer's own fold (`SessionView`) and a plain pass
 * over the events; and the session's figures, pivots, types, legend and triggers made from the rows equal the fold's.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { EventStore, ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import * as fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { SessionView } from "../src/index.ts"
import * as StoredTimeline from "../src/StoredTimeline.ts"
import { play } from "./support/play.ts"

const SIZE = ReadModels.Timeline.SIZE
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "timeline2-rows-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let files = 0

type Logged = ReturnType<typeof SessionLog.fromEvents>[number]

/** Appends `log` in batches ending at `cuts`, the first `handOver` batches by one process, the rest by another. */
const write = (
  file: string,
  sessionId: string,
  log: ReadonlyArray<Logged>,
  cuts: ReadonlyArray<number>,
  handOver: number,
) =>
  Effect.gen(function* () {
    const ends = [...new Set([...cuts.filter((c) => c > 0 && c < log.length), log.length])].sort((a, b) => a - b)
    const batches = ends.map((end, i) => [i === 0 ? 0 : ends[i - 1]!, end] as const)
    const appendAll = (list: ReadonlyArray<readonly [number, number]>) =>
      Effect.gen(function* () {
        for (const [from, to] of list)
          yield* SessionLog.append(
            sessionId,
            from === 0 ? "no-stream" : from,
            log.slice(from, to).map(({ event, meta }) => ({ id: meta.id, event })),
          )
      })
    // Snapshots every 50 events: the second process resumes from partial states.
    const layer = () => ReadModels.layerSqlite({ filename: file, snapshots: { every: 50 } })
    yield* Effect.provide(appendAll(batches.slice(0, handOver)), layer())
    yield* Effect.provide(appendAll(batches.slice(handOver)), layer())
    return yield* Effect.provide(
      Effect.gen(function* () {
        return yield* (yield* ReadModels.ReadModels).timeline(sessionId)
      }),
      layer(),
    )
  })

/** The reference buckets: the viewer's fold of the whole log, and a plain pass over its events, cut every SIZE. */
const reference = (sessionId: string, log: ReadonlyArray<Logged>) => {
  const view = SessionView.make(sessionId)
  for (const { event, meta } of log) SessionView.evolve(view, event, meta)
  const of = (version: number) => Math.floor((version - 1) / SIZE)
  const buckets = new Map<number, Array<Logged>>()
  for (const l of log) {
    const list = buckets.get(of(l.meta.version)) ?? []
    list.push(l)
    buckets.set(of(l.meta.version), list)
  }
  const rows = [...buckets].map(([bucket, events]) => {
    const inIt = <T extends { readonly version: number }>(list: ReadonlyArray<T>) =>
      list.filter((x) => of(x.version) === bucket)
    const steps = inIt(view.steps).map(({ messageId: _, ...s }) => s)
    const types: Record<string, number> = {}
    for (const { event } of events) types[event._tag] = (types[event._tag] ?? 0) + 1
    const prunes = events.filter((l) => l.event._tag === "PartCompacted")
    const titles = events.filter((l) => l.event._tag === "SessionStarted" || l.event._tag === "SessionTitled")
    const times = events.flatMap(({ event }) => {
      const at = (event as { readonly at?: unknown }).at
      return typeof at === "number" ? [at] : []
    })
    const first = <T>(list: ReadonlyArray<T>, better: (a: T, b: T) => boolean) =>
      list.reduce<T | null>((best, x) => (best === null || better(x, best) ? x : best), null)
    return {
      bucket,
      last: events[events.length - 1]!.meta.version,
      events: events.length,
      types,
      messages: [...view.added.values()].filter((v) => of(v) === bucket).length,
      steps: steps.length,
      low: first(steps, (a, b) => a.total < b.total),
      high: first(steps, (a, b) => a.total > b.total),
      lastStep: steps[steps.length - 1] ?? null,
      prunes: prunes.length,
      pruneRuns: inIt(view.marks).filter((m) => m.kind === "prune").length,
      firstPrune: prunes[0]?.meta.version ?? null,
      marks: inIt(view.marks)
        .filter((m) => m.kind !== "prune")
        .map(({ count: _, ...m }) => m),
      triggers: inIt(view.triggers),
      titled: titles.length > 0,
      title: titles.length === 0 ? null : ((titles[titles.length - 1]!.event as { title?: string }).title ?? null),
      lastActivity: times.length === 0 ? null : Math.max(...times),
      lineage: events.flatMap(({ event }) =>
        event._tag === "SessionForked" ? [{ session: event.parent, version: event.parentVersion }] : [],
      ),
    }
  })
  return { view, rows }
}

const session = fc.record({
  turns: fc.integer({ min: 1, max: 160 }),
  compactEvery: fc.integer({ min: 1, max: 30 }),
  pruneEvery: fc.integer({ min: 1, max: 7 }),
  overflowTurn: fc.integer({ min: 1, max: 60 }),
  cuts: fc.array(fc.integer({ min: 1, max: 700 }), { maxLength: 12 }),
  handOver: fc.integer({ min: 0, max: 12 }),
})

describe("the timeline read model", () => {
  it("given any split of a session's log into batches over two processes, then its rows equal the buckets of one fold of the whole log, and the figures made from them equal the fold's", async () => {
    await fc.assert(
      fc.asyncProperty(session, async ({ turns, compactEvery, pruneEvery, overflowTurn, cuts, handOver }) => {
        const sessionId = `ses_rows_${files}`
        const file = path.join(dir, `rows-${files++}.db`)
        const log = SessionLog.fromEvents(sessionId, play({ sessionId, turns, compactEvery, pruneEvery, overflowTurn }))
        const stored = await Effect.runPromise(write(file, sessionId, log, cuts, handOver))
        const { view, rows } = reference(sessionId, log)
        expect(stored).toBeDefined()
        expect(stored!.head).toBe(log.length)
        expect(stored!.buckets).toEqual(rows)
        expect(StoredTimeline.summary(sessionId, stored!)).toEqual(SessionView.summary(view))
        expect(StoredTimeline.pivots(stored!)).toEqual(SessionView.pivots(view))
        expect(StoredTimeline.types(stored!)).toEqual(
          Object.fromEntries([...view.byType].map(([type, versions]) => [type, versions.length])),
        )
        expect(StoredTimeline.legend(stored!.buckets)).toEqual(SessionView.legend(view.marks))
        expect(StoredTimeline.triggers(stored!.buckets)).toEqual(view.triggers)
        expect(StoredTimeline.stepCount(stored!)).toBe(view.steps.length)
      }),
      { numRuns: 12 },
    )
  }, 600_000)

  it("given rows one version behind the head (events appended without the read models), then none are answered", async () => {
    const sessionId = "ses_rows_behind"
    const file = path.join(dir, "behind.db")
    const log = SessionLog.fromEvents(sessionId, play({ sessionId, turns: 30 }))
    await Effect.runPromise(write(file, sessionId, log.slice(0, -1), [], 0))
    // The last event appended by a store without the inline read models.
    const last = log[log.length - 1]!
    await Effect.runPromise(
      SessionLog.append(sessionId, log.length - 1, [{ id: last.meta.id, event: last.event }]).pipe(
        Effect.provide(EventStore.layerSqlite({ filename: file })),
      ),
    )
    const stored = await Effect.runPromise(
      Effect.gen(function* () {
        return yield* (yield* ReadModels.ReadModels).timeline(sessionId)
      }).pipe(Effect.provide(ReadModels.layerSqlite({ filename: file, readonly: true }))),
    )
    expect(stored).toBeUndefined()
  }, 120_000)
})
