// The in-memory event store: the reference behaviour of the contract, and a fast store for tests. Payloads go
// through JSON like every other backend, so a caller mutating an object after appending changes nothing stored.

import { Traced } from "@pivot/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as SubscriptionRef from "effect/SubscriptionRef"
import {
  type AppendResult,
  alreadyForgotten,
  expectedVersionMatches,
  prepareAppend,
  type RecordedEvent,
  type StoredSnapshot,
} from "../Event.ts"
import type { EventStoreShape } from "../EventStore.ts"
import * as Snapshot from "../Snapshot.ts"
import { DuplicateEventId, WrongExpectedVersion } from "../StoreError.ts"
import * as Paging from "./paging.ts"
import * as Seal from "./seal.ts"

/** Options of the memory store. */
export interface MemoryOptions {
  readonly pageSize?: number | undefined
}

// An event as kept in memory: payloads stay JSON text until read.
interface Stored extends Omit<RecordedEvent, "data" | "metadata"> {
  readonly data: string
  readonly metadata: string | null
}

export const make = (options: MemoryOptions = {}): Effect.Effect<EventStoreShape> =>
  Effect.gen(function* () {
    const pageSize = options.pageSize ?? 1000
    // Positions start at 1 and have no gaps here, so `log[position - 1]` is the event at `position`.
    const log: Array<Stored> = []
    const streams = new Map<string, Array<Stored>>()
    const ids = new Set<string>()
    const ticks = yield* SubscriptionRef.make(0)
    // The key table: one data key per stream with sealed fields; `forget` deletes the entry.
    const keys = new Map<string, Seal.StreamKey>()
    // The latest snapshot of each stream.
    const snapshots = new Map<string, StoredSnapshot>()

    const parse = (event: Stored): RecordedEvent => ({
      ...event,
      data: JSON.parse(event.data),
      metadata: event.metadata === null ? null : JSON.parse(event.metadata),
    })

    /** Stored events as recorded events, their sealed fields opened with the streams' current keys. */
    const recorded = (stored: ReadonlyArray<Stored>) =>
      Seal.openRecorded(
        stored.map(parse),
        stored.map((event) => event.data),
        (streams) => Effect.succeed(new Map(streams.flatMap((s) => (keys.has(s) ? [[s, keys.get(s)!]] : [])))),
      )

    const readPage: Paging.ReadPage = (after, limit) =>
      Effect.suspend(() => recorded(log.slice(Math.max(0, after), Math.max(0, after) + limit)))

    /** Appends; `atCommit` runs right before the events are written, with no yield between (atomically). */
    const appendWith = Traced.fn("EventStore.append")(function* (
      stream: string,
      expectedVersion: Parameters<EventStoreShape["append"]>[1],
      events: Parameters<EventStoreShape["append"]>[2],
      atCommit?: () => void,
    ) {
      const batch = prepareAppend(stream, expectedVersion, events)
      if (Result.isFailure(batch)) return yield* batch.failure
      const recordedAt = yield* Clock.currentTimeMillis
      // Sealed before the checks (a key made here is kept only if the append succeeds).
      let made: Seal.StreamKey | undefined
      const stored = yield* Seal.storedData(
        stream,
        batch.success,
        Effect.sync(() => {
          const existing = keys.get(stream)
          if (existing !== undefined) return existing
          made = Seal.newKey()
          return made
        }),
      )
      // No yield between the checks and the writes: the append is atomic with respect to other fibers.
      const existing = batch.success.filter((event) => ids.has(event.id)).map((event) => event.id)
      if (existing.length > 0) return yield* new DuplicateEventId({ ids: existing })
      const current = streams.get(stream) ?? []
      if (!expectedVersionMatches(expectedVersion, current.length)) {
        return yield* new WrongExpectedVersion({ stream, expected: expectedVersion, actual: current.length })
      }
      if (batch.success.length === 0) {
        return { streamVersion: current.length, position: current.at(-1)?.position ?? 0 } satisfies AppendResult
      }
      // Every event was validated above and nothing below can fail, so the stream grows in place (O(batch)).
      atCommit?.()
      const next = current
      if (made !== undefined && !keys.has(stream)) keys.set(stream, made)
      for (const [i, event] of batch.success.entries()) {
        const recorded: Stored = {
          id: event.id,
          type: event.type,
          version: event.version,
          data: stored[i]!,
          metadata: event.metadata,
          stream,
          streamVersion: next.length + 1,
          position: log.length + 1,
          recordedAt,
        }
        log.push(recorded)
        next.push(recorded)
        ids.add(event.id)
      }
      streams.set(stream, next)
      const position = log.length
      yield* SubscriptionRef.update(ticks, (n) => n + 1)
      return { streamVersion: next.length, position } satisfies AppendResult
    })

    const store: EventStoreShape = {
      append: (stream, expectedVersion, events) => appendWith(stream, expectedVersion, events),
      read: (stream, options) =>
        Effect.suspend(() => {
          const events = streams.get(stream) ?? []
          const from = Math.max(1, options?.from ?? 1)
          const to = Math.min(events.length, options?.to ?? events.length)
          return recorded(from > to ? [] : events.slice(from - 1, to))
        }).pipe(Traced.withSpan("EventStore.read")),
      forget: (stream, options) => {
        const erase = () => {
          snapshots.delete(stream)
          return keys.delete(stream)
        }
        if (options?.marker === undefined)
          return Effect.sync(() => ({ keyDeleted: erase(), logCleared: true, alreadyForgotten: false }))
        const marker = options.marker
        const erasable = options.erasable
        // A no-op writes nothing, so checking before the append is safe: an append after the check comes after it.
        if (erasable !== undefined) {
          const types = (streams.get(stream) ?? []).map((e) => e.type)
          const last = types.lastIndexOf(marker.type)
          if (alreadyForgotten(last < 0 ? undefined : types.slice(last + 1), keys.has(stream), erasable))
            return Effect.succeed({ keyDeleted: false, logCleared: true, alreadyForgotten: true })
        }
        // The key goes in the marker's commit, so no reader sees one without the other.
        let keyDeleted = false
        return appendWith(stream, "any", [marker], () => {
          keyDeleted = erase()
        }).pipe(
          Effect.map((appended) => ({
            keyDeleted,
            logCleared: true,
            alreadyForgotten: false,
            version: appended.streamVersion,
          })),
          Effect.catchTags({
            DuplicateEventId: (error) => Effect.die(error),
            MalformedEvent: (error) => Effect.die(error),
            WrongExpectedVersion: (error) => Effect.die(error),
          }),
        )
      },
      writeSnapshot: (stream, snapshot) =>
        Effect.map(Clock.currentTimeMillis, (recordedAt) => {
          const { unlessAfter, ...stored } = snapshot
          if (unlessAfter !== undefined) {
            // Only the events after the snapshot's version (event k is at index k - 1): a long stream is not read whole.
            const events = streams.get(stream) ?? []
            for (let i = Math.max(0, snapshot.version); i < events.length; i++)
              if (events[i]!.type === unlessAfter) return
          }
          snapshots.set(stream, { ...stored, stream, checksum: Snapshot.checksum(snapshot.data), recordedAt })
        }),
      readSnapshot: (stream) => Effect.sync(() => snapshots.get(stream)),
      isSealed: (stream) => Effect.sync(() => keys.has(stream)),
      readType: (type) => Effect.suspend(() => recorded(log.filter((event) => event.type === type))),
      streamVersion: (stream) => Effect.sync(() => streams.get(stream)?.length ?? 0),
      nothingAfter: (stream, version) => version >= (streams.get(stream)?.length ?? 0),
      readAll: (options) => Paging.readAll(readPage, options?.after ?? 0, options?.pageSize ?? pageSize),
      subscribe: (options) => Paging.subscribe(readPage, ticks, undefined, options?.after ?? 0, pageSize),
    }
    return store
  })
