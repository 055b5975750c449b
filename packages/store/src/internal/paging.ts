// Paged reads of the global log, shared by every backend: `readAll` ends at the current head, `subscribe` keeps
// going and waits for new events between pages.
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { RecordedEvent } from "../Event.ts"
import type { ReadError } from "../StoreError.ts"

/** Reads up to `limit` events with a position greater than `after`, in position order. */
export type ReadPage = (after: number, limit: number) => Effect.Effect<ReadonlyArray<RecordedEvent>, ReadError>

const lastPosition = (page: ReadonlyArray<RecordedEvent>, fallback: number): number =>
  page.length === 0 ? fallback : page[page.length - 1]!.position

/** Every event after `after` up to the head at the time the last page is read; one page in memory at a time. */
export const readAll = (readPage: ReadPage, after: number, pageSize: number): Stream.Stream<RecordedEvent, ReadError> =>
  Stream.paginate(after, (cursor: number) =>
    Effect.map(
      readPage(cursor, pageSize),
      (page) => [page, page.length < pageSize ? Option.none() : Option.some(lastPosition(page, cursor))] as const,
    ),
  )

/**
 * Catches up from `after`, then waits for news and reads again, forever. News is `ticks` changing (this process
 * appended, or another process announced an append) or `poll` elapsing, for writers nobody announces. The tick is
 * read before the page, so an append that lands between the two is never slept through.
 */
export const subscribe = (
  readPage: ReadPage,
  ticks: SubscriptionRef.SubscriptionRef<number>,
  poll: Duration.Duration | undefined,
  after: number,
  pageSize: number,
): Stream.Stream<RecordedEvent, ReadError> => {
  const changed = (seen: number) =>
    SubscriptionRef.changes(ticks).pipe(
      Stream.filter((tick) => tick !== seen),
      Stream.take(1),
      Stream.runDrain,
    )
  const waitAfter = (seen: number) =>
    poll === undefined ? changed(seen) : Effect.raceFirst(changed(seen), Effect.sleep(poll))
  return Stream.paginate(after, (cursor: number) =>
    Effect.gen(function* () {
      const seen = yield* SubscriptionRef.get(ticks)
      const page = yield* readPage(cursor, pageSize)
      if (page.length > 0) return [page, Option.some(lastPosition(page, cursor))] as const
      yield* waitAfter(seen)
      return [page, Option.some(cursor)] as const
    }),
  )
}
