/**
 * The sessions the viewer serves, read from the store and kept folded in memory: each session's decoded log and its
 * `SessionView`, caught up with the store on every request (one `streamVersion` query, then only the new events),
 * so a page never folds a long log twice. Logs of the least recently used sessions are dropped past `cacheSize`;
 * their summaries stay. Reads only: the catalog never appends.
 */
import { Events } from "@pivot/core"
import {
  EventStore,
  type EventStoreShape,
  Projections,
  type ReadError,
  type ReadModels,
  SessionLog,
} from "@pivot/store"
import { Context, Effect, Layer, Semaphore, Stream } from "effect"
import { describe, NotFound, StoreFailed } from "./ServeError.ts"
import * as SessionView from "./SessionView.ts"
import * as StoredTimeline from "./StoredTimeline.ts"

/** A session held in memory, caught up with the store. */
export interface Loaded {
  readonly sessionId: string
  readonly log: ReadonlyArray<SessionLog.Logged>
  readonly view: SessionView.State
  /** The global position of its newest event (where a live subscription starts). */
  readonly position: number
}

/** A page of the event log. */
export interface EventPage {
  readonly total: number
  readonly events: ReadonlyArray<{
    readonly version: number
    readonly id: string
    readonly type: string
    readonly data: unknown
  }>
}

/** The catalog's operations. */
export interface CatalogShape {
  /** The ids of every session in the store (one cheap query). */
  readonly ids: Effect.Effect<ReadonlyArray<string>, StoreFailed>
  /**
   * Reads and folds the sessions ahead of the first page (the last `cacheSize` listed with their logs, the others
   * as figures only), so that opening a session does not wait for its log to be folded. Failures are left to pages.
   */
  readonly warm: Effect.Effect<void>
  /**
   * A session's timeline rows and compactions from the store's read model when they stand at its head (ADR 0057):
   * what the session page's first render needs, without reading the log. `undefined` when the store has none current
   * (the routes fold the log then). Does not take the catalog's lock: a fold under way does not hold it up.
   */
  readonly stored: (sessionId: string) => Effect.Effect<ReadModels.StoredTimeline | undefined>
  /** Every session in the store, with its figures. */
  readonly sessions: Effect.Effect<ReadonlyArray<SessionView.Summary>, StoreFailed>
  /** One session, caught up with the store; `NotFound` when the store has no events for it. */
  readonly session: (sessionId: string) => Effect.Effect<Loaded, NotFound | StoreFailed>
  /** Events `offset`… of the session (of one type when given), at most `limit` of them. */
  readonly events: (
    sessionId: string,
    options: { readonly type: string | undefined; readonly offset: number; readonly limit: number },
  ) => Effect.Effect<EventPage, NotFound | StoreFailed>
  /** The session's new stream versions as they are appended, from after `position`; never ends. */
  readonly live: (sessionId: string, position: number) => Stream.Stream<number, StoreFailed>
  /** The store's read side: the built-in read models and the projections stored, with their status. */
  readonly projections: Effect.Effect<ReadonlyArray<Projections.ReadSideEntry>, StoreFailed>
  /** A projection's stored state for a key (default: its global key) and some of its keys; `NotFound` if none. */
  readonly projection: (
    name: string,
    key: string | undefined,
  ) => Effect.Effect<
    { readonly version: number; readonly state: unknown; readonly keys: ReadonlyArray<string> },
    NotFound | StoreFailed
  >
}

/** How the catalog reads the store's projections (none for a store without them, e.g. an export in memory). */
export type ProjectionSource = Pick<Projections.ProjectionsShape, "status" | "stored"> &
  Partial<Pick<Projections.ProjectionsShape, "builtIns">>

const noProjections: ProjectionSource = { status: Effect.succeed([]), stored: () => Effect.succeed(undefined) }

/**
 * Events read, decoded and folded between two yields to the event loop in a session's first fold (a few milliseconds
 * of CPU on a quiet machine): each step of a request that comes meanwhile waits for at most one page. At 2,000 (tens
 * of milliseconds a page) a fresh server's first render at 100k events took ~25% longer (docs/benchmarks.md).
 */
export const PAGE = 250

/** Sessions whose logs the catalog keeps (the most recently used), unless told otherwise. */
export const CACHE_SIZE = 8

/** The sessions the viewer serves. */
export class Catalog extends Context.Service<Catalog, CatalogShape>()("@pivot/server/Catalog") {}

/** How the catalog finds the session ids of the store (the store has no listing of its own). */
export type ListSessions = Effect.Effect<ReadonlyArray<{ readonly sessionId: string }>, ReadError>

interface Entry {
  log: Array<SessionLog.Logged> | undefined
  view: SessionView.State
  position: number
}

const storeFailed = (error: unknown) => new StoreFailed({ message: describe(error) })

/** Builds the catalog over a store and its session listing. */
export const make = (
  store: EventStoreShape,
  listSessions: ListSessions,
  options: {
    readonly cacheSize?: number | undefined
    readonly projections?: ProjectionSource | undefined
    /** The store's timeline read model (`ReadModels.timeline`), when it has one. */
    readonly timeline?:
      | ((sessionId: string) => Effect.Effect<ReadModels.StoredTimeline | undefined, ReadError>)
      | undefined
  } = {},
): Effect.Effect<CatalogShape> =>
  Effect.gen(function* () {
    const cacheSize = Math.max(1, options.cacheSize ?? CACHE_SIZE)
    const lock = yield* Semaphore.make(1)
    const entries = new Map<string, Entry>()
    const recent: Array<string> = []

    const touch = (sessionId: string) => {
      const i = recent.indexOf(sessionId)
      if (i >= 0) recent.splice(i, 1)
      recent.push(sessionId)
      while (recent.length > cacheSize) {
        const dropped = entries.get(recent.shift()!)
        if (dropped !== undefined) dropped.log = undefined
      }
    }

    /**
     * Reads, decodes and folds `stream`'s events `from`…`head` into `entry`, `PAGE` events at a time. A new entry
     * (nobody holds it yet) gives the event loop back between pages, so that a long log's first fold (seconds at 100k
     * events) lets other requests through (the page's HTML and scripts, other sessions' routes); an entry already
     * handed out is caught up in one go, so that a page never sees a view between two of its pages. Foreign events
     * (not core's) are skipped by the decoder but still count as stream versions. Returns false when the new events
     * hold a `SessionForgotten` and the entry had been folded before (what it holds has the erased text).
     */
    const foldInto = (entry: Entry, stream: string, head: number, yielding: boolean) =>
      Effect.gen(function* () {
        const log = entry.log!
        const before = entry.view.version
        for (let from = before + 1; from <= head; from += PAGE) {
          const recorded = yield* Effect.mapError(
            store.read(stream, { from, to: Math.min(head, from + PAGE - 1) }),
            storeFailed,
          )
          if (before > 0 && SessionLog.forgottenIn(recorded)) return false
          const decoded = yield* Effect.mapError(Effect.fromResult(SessionLog.decodeAll(recorded)), storeFailed)
          for (const logged of decoded) {
            log.push(logged)
            SessionView.evolve(entry.view, logged.event, logged.meta)
          }
          const last = recorded[recorded.length - 1]
          if (last !== undefined) {
            entry.view.version = Math.max(entry.view.version, last.streamVersion)
            entry.position = last.position
          }
          if (yielding && from + PAGE <= head) yield* Effect.yieldNow
        }
        return true
      })

    const fresh = (sessionId: string): Entry => ({ log: [], view: SessionView.make(sessionId), position: 0 })

    /** Catches a session up with the store; keeps its log unless `withLog` is false and it had none. */
    const catchUp = (sessionId: string, withLog: boolean) =>
      lock.withPermit(
        Effect.gen(function* () {
          const stream = Events.streamName(sessionId)
          const head = yield* Effect.mapError(store.streamVersion(stream), storeFailed)
          if (head === 0) return yield* new NotFound({ message: `unknown session ${sessionId}` })
          let entry = entries.get(sessionId)
          // A summary without a log is refolded from zero when the log is wanted again.
          if (entry !== undefined && entry.log === undefined && (withLog || entry.view.version < head)) {
            entries.delete(sessionId)
            entry = undefined
          }
          if (entry === undefined) {
            // Folded aside and kept only when complete: an interrupted fold (a server closing) leaves nothing half
            // done behind.
            const folded = fresh(sessionId)
            yield* foldInto(folded, stream, head, true)
            entry = folded
            entries.set(sessionId, entry)
          } else if (entry.view.version < head && !(yield* foldInto(entry, stream, head, false))) {
            // Forgotten since it was folded (`SessionForgotten`): fold it again from zero.
            const folded = fresh(sessionId)
            yield* foldInto(folded, stream, head, true)
            entry = folded
            entries.set(sessionId, entry)
          }
          if (withLog) touch(sessionId)
          else if (!recent.includes(sessionId)) entry.log = undefined
          return entry
        }),
      )

    const session = (sessionId: string) =>
      Effect.map(
        catchUp(sessionId, true),
        (entry): Loaded => ({ sessionId, log: entry.log!, view: entry.view, position: entry.position }),
      )

    // The rows last read per session: asked again at the same head (one stream-version query), they are not read again.
    const storedRows = new Map<string, ReadModels.StoredTimeline>()
    const stored = (sessionId: string): Effect.Effect<ReadModels.StoredTimeline | undefined> => {
      const read = options.timeline
      if (read === undefined) return Effect.succeed(undefined)
      return Effect.gen(function* () {
        const known = storedRows.get(sessionId)
        if (known !== undefined && (yield* store.streamVersion(Events.streamName(sessionId))) === known.head)
          return known
        const rows = yield* read(sessionId)
        storedRows.delete(sessionId)
        if (rows !== undefined) storedRows.set(sessionId, rows)
        // As many as the logs the catalog keeps, the most recently read.
        if (storedRows.size > cacheSize) storedRows.delete(storedRows.keys().next().value!)
        return rows
      }).pipe(Effect.orElseSucceed(() => undefined))
    }

    const sessions = Effect.gen(function* () {
      const listed = yield* Effect.mapError(listSessions, storeFailed)
      const out: Array<SessionView.Summary> = []
      for (const { sessionId } of listed) {
        // A session folded here at its head answers from memory; else from the timeline rows when current.
        const held = entries.get(sessionId)
        if (held === undefined || held.view.version === 0) {
          const rows = yield* stored(sessionId)
          if (rows !== undefined) {
            out.push(StoredTimeline.summary(sessionId, rows))
            continue
          }
        }
        const entry = yield* catchUp(sessionId, false).pipe(
          Effect.catchTag("NotFound", () => Effect.succeed(undefined)),
        )
        if (entry !== undefined) out.push(SessionView.summary(entry.view))
      }
      return out
    })

    const events: CatalogShape["events"] = (sessionId, { type, offset, limit }) =>
      Effect.gen(function* () {
        const loaded = yield* session(sessionId)
        const versions =
          type === undefined ? undefined : (loaded.view.byType.get(type) ?? ([] as ReadonlyArray<number>))
        const total = versions === undefined ? loaded.log.length : versions.length
        const page: Array<SessionLog.Logged> = []
        if (versions === undefined) page.push(...loaded.log.slice(offset, offset + limit))
        else
          for (const version of versions.slice(offset, offset + limit)) {
            const logged = loaded.log[indexOf(loaded.log, version)]
            if (logged !== undefined) page.push(logged)
          }
        return {
          total,
          events: page.map(({ event, meta }) => ({
            version: meta.version,
            id: meta.id,
            type: event._tag,
            data: event,
          })),
        }
      })

    const live = (sessionId: string, position: number) => {
      const stream = Events.streamName(sessionId)
      return store.subscribe({ after: position }).pipe(
        Stream.filter((recorded) => recorded.stream === stream),
        Stream.map((recorded) => recorded.streamVersion),
        Stream.mapError(storeFailed),
      )
    }

    const ids = Effect.mapBoth(listSessions, {
      onFailure: storeFailed,
      onSuccess: (listed) => listed.map((s) => s.sessionId),
    })

    const warm = Effect.gen(function* () {
      const listed = yield* ids
      for (const [i, sessionId] of listed.entries()) yield* catchUp(sessionId, i >= listed.length - cacheSize)
    }).pipe(Effect.ignore)

    const source = options.projections ?? noProjections
    const projections = Effect.mapError(
      Effect.map(Effect.all([source.status, source.builtIns ?? Effect.succeed([])]), ([stored, builtIns]) =>
        Projections.readSide(stored, builtIns),
      ),
      storeFailed,
    )
    const projection = (name: string, key: string | undefined) =>
      Effect.gen(function* () {
        const found = yield* Effect.mapError(source.stored(name, key), storeFailed)
        if (found === undefined) return yield* new NotFound({ message: `no projection ${name} is stored` })
        return found
      })

    return { ids, warm, stored, sessions, session, events, live, projections, projection }
  })

/** The index in a log (stream versions ascending, foreign events skipped) of the event at `version`. */
const indexOf = (log: ReadonlyArray<SessionLog.Logged>, version: number): number => {
  let lo = Math.min(version - 1, log.length - 1)
  // Without foreign events the index is version - 1; otherwise search down from there.
  if (lo >= 0 && log[lo]!.meta.version === version) return lo
  let hi = lo
  lo = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const v = log[mid]!.meta.version
    if (v === version) return mid
    if (v < version) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/** The catalog over the `EventStore` in context. */
export const layer = (
  listSessions: ListSessions,
  options: { readonly cacheSize?: number | undefined } = {},
): Layer.Layer<Catalog, never, EventStore> =>
  Layer.effect(
    Catalog,
    Effect.gen(function* () {
      return yield* make(yield* EventStore, listSessions, options)
    }),
  )
