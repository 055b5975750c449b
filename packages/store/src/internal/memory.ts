// The in-memory event store: the reference behaviour of the contract, and a fast store for tests. Payloads go
// through JSON like every other backend, so a caller mutating an object after appending changes nothing stored.
import { Clock, Effect, Result, SubscriptionRef } from "effect"
import { type AppendResult, expectedVersionMatches, prepareAppend, type RecordedEvent } from "../Event.ts"
import type { EventStoreShape } from "../EventStore.ts"
import { DuplicateEventId, WrongExpectedVersion } from "../StoreError.ts"
import * as Paging from "./paging.ts"

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

    const parse = (event: Stored): RecordedEvent => ({
      ...event,
      data: JSON.parse(event.data),
      metadata: event.metadata === null ? null : JSON.parse(event.metadata),
    })

    const readPage: Paging.ReadPage = (after, limit) =>
      Effect.sync(() => log.slice(Math.max(0, after), Math.max(0, after) + limit).map(parse))

    const store: EventStoreShape = {
      append: Effect.fn("EventStore.append")(function* (stream, expectedVersion, events) {
        const batch = prepareAppend(stream, expectedVersion, events)
        if (Result.isFailure(batch)) return yield* batch.failure
        const recordedAt = yield* Clock.currentTimeMillis
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
        const next = current
        for (const event of batch.success) {
          const recorded: Stored = {
            ...event,
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
      }),
      read: (stream, options) =>
        Effect.sync(() => {
          const events = streams.get(stream) ?? []
          const from = Math.max(1, options?.from ?? 1)
          const to = Math.min(events.length, options?.to ?? events.length)
          return from > to ? [] : events.slice(from - 1, to).map(parse)
        }).pipe(Effect.withSpan("EventStore.read")),
      streamVersion: (stream) => Effect.sync(() => streams.get(stream)?.length ?? 0),
      readAll: (options) => Paging.readAll(readPage, options?.after ?? 0, options?.pageSize ?? pageSize),
      subscribe: (options) => Paging.subscribe(readPage, ticks, undefined, options?.after ?? 0, pageSize),
    }
    return store
  })
