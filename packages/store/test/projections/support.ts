// Projections for the tests, and the reference they are checked against: a tally computed from the generated
// events themselves (never through a projection's evolve or the store).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Events, Projection } from "@pivot/core"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, afterEach } from "vitest"
import { Projections, SessionLog } from "../../src/index.ts"

/** Events of each type, and how many in all: one state per session or across sessions. */
export interface Tally {
  readonly count: number
  readonly types: Readonly<Record<string, number>>
}

const empty: Tally = { count: 0, types: {} }

/** The tally as a projection; `weight` changes what each event adds (a different version's fold). */
export const tally = (name: string, version = 1, weight = 1): Projection.Projection<Tally> => ({
  name,
  version,
  initial: empty,
  evolve: (state, event) => ({
    count: state.count + weight,
    types: { ...state.types, [event._tag]: (state.types[event._tag] ?? 0) + weight },
  }),
})

/** The reference: the same tally counted directly from a list of events. */
export const reference = (events: Iterable<Events.Event>, weight = 1): Tally => {
  let count = 0
  const types: Record<string, number> = {}
  for (const event of events) {
    count += weight
    types[event._tag] = (types[event._tag] ?? 0) + weight
  }
  return { count, types }
}

/** A tally that throws on the events of one type (a broken plugin). */
export const throwingOn = (name: string, tag: string): Projection.Projection<Tally> => {
  const base = tally(name)
  return {
    ...base,
    evolve: (state, event, meta) => {
      if (event._tag === tag) throw new Error(`cannot fold ${tag}\nsecond line`)
      return base.evolve(state, event, meta)
    },
  }
}

/** Opens a SQLite store with projections, fast polling for the tests. */
export const openSqlite = (filename: string, projections: ReadonlyArray<Projections.AnyDefinition>, owner?: string) =>
  ManagedRuntime.make(
    Projections.layerSqlite({
      filename,
      synchronous: "normal",
      projections,
      projector: { pollInterval: "5 millis", ...(owner === undefined ? {} : { owner }) },
    }),
  )

/** Appends events to a session as the command handler would: one batch each, with the exact version. */
export const appendBatches = (sessionId: string, batches: ReadonlyArray<ReadonlyArray<Events.Event>>, from = 0) =>
  Effect.gen(function* () {
    let version = from
    for (const batch of batches) {
      const entries = batch.map((event, i) => ({ id: SessionLog.eventId(sessionId, version + i + 1), event }))
      version = (yield* SessionLog.append(sessionId, version, entries)).streamVersion
    }
    return version
  })

/**
 * A test file's scratch, set up at its top level: its SQLite files in one temporary folder named `prefix…` (removed
 * after the file), and the runtimes it keeps (disposed after each test).
 */
export const scratch = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  let files = 0
  const opened: Array<{ dispose: () => Promise<void> }> = []
  afterEach(async () => {
    for (const runtime of opened.splice(0)) await runtime.dispose()
  })
  const keep = <R extends { dispose: () => Promise<void> }>(runtime: R): R => {
    opened.push(runtime)
    return runtime
  }
  return {
    /** A new file name in the folder. */
    fresh: () => path.join(dir, `f${++files}.db`),
    keep,
    /** `openSqlite`, kept. */
    open: (filename: string, definitions: ReadonlyArray<Projections.AnyDefinition>, owner?: string) =>
      keep(openSqlite(filename, definitions, owner)),
    /** Disposes the runtime kept last, now. */
    disposeLast: () => opened.pop()!.dispose(),
  }
}
