/**
 * Branded, prefixed, sortable identifiers and the `Ids` service that makes them.
 *
 * An id is `<prefix>_<12 hex: time·4096 + counter><14 base62 random>`; comparing two ids of the same kind as strings
 * gives their creation order, as in OpenCode. Domain code never calls `Date.now` or `Math.random`: ids arrive on
 * commands, made by this service from `Clock` and `Random`.
 */
import { Clock, Context, Effect, Layer, Random, Schema } from "effect"

const prefixed = (prefix: string) => Schema.String.check(Schema.isPattern(new RegExp(`^${prefix}_[0-9A-Za-z_-]+$`)))

/** The id of a session; its event stream is `session-<SessionId>`. */
export const SessionId = prefixed("ses").pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

/** The id of a message (user or assistant); sortable in creation order. */
export const MessageId = prefixed("msg").pipe(Schema.brand("MessageId"))
export type MessageId = typeof MessageId.Type

/** The id of a message part; sortable in creation order. */
export const PartId = prefixed("prt").pipe(Schema.brand("PartId"))
export type PartId = typeof PartId.Type

/** The id of a stored event. */
export const EventId = prefixed("evt").pipe(Schema.brand("EventId"))
export type EventId = typeof EventId.Type

/** The prefixes of pivot's id kinds. */
export type Prefix = "ses" | "msg" | "prt" | "evt"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** Formats an id from its parts; pure, so tests and the service share it. */
export const format = (prefix: Prefix, millis: number, counter: number, random: ReadonlyArray<number>): string => {
  const stamp = (BigInt(Math.max(0, Math.floor(millis))) * 4096n + BigInt(counter % 4096))
    .toString(16)
    .padStart(12, "0")
  let tail = ""
  for (const r of random) tail += BASE62[r % 62]
  return `${prefix}_${stamp}${tail}`
}

/** Makes fresh ids. */
export class Ids extends Context.Service<
  Ids,
  {
    readonly session: Effect.Effect<SessionId>
    readonly message: Effect.Effect<MessageId>
    readonly part: Effect.Effect<PartId>
    readonly event: Effect.Effect<EventId>
  }
>()("@pivot/core/Ids") {
  /** Ids from `Clock` and `Random`: ascending within a process, unique across processes. */
  static readonly layer: Layer.Layer<Ids> = Layer.effect(
    Ids,
    Effect.sync(() => {
      let lastMillis = -1
      let counter = 0
      const next = (prefix: Prefix) =>
        Effect.gen(function* () {
          const millis = yield* Clock.currentTimeMillis
          if (millis > lastMillis) {
            lastMillis = millis
            counter = 0
          } else counter++
          const random: Array<number> = []
          for (let i = 0; i < 14; i++) random.push(yield* Random.nextIntBetween(0, 62))
          return format(prefix, lastMillis, counter, random)
        })
      return {
        session: next("ses") as Effect.Effect<SessionId>,
        message: next("msg") as Effect.Effect<MessageId>,
        part: next("prt") as Effect.Effect<PartId>,
        event: next("evt") as Effect.Effect<EventId>,
      }
    }),
  )

  /** Deterministic ids `<prefix>_<n>` (zero-padded, so still sortable) for tests and examples. */
  static readonly layerSequential: Layer.Layer<Ids> = Layer.effect(
    Ids,
    Effect.sync(() => {
      let n = 0
      const next = (prefix: Prefix) => Effect.sync(() => `${prefix}_${String(++n).padStart(8, "0")}`)
      return {
        session: next("ses") as Effect.Effect<SessionId>,
        message: next("msg") as Effect.Effect<MessageId>,
        part: next("prt") as Effect.Effect<PartId>,
        event: next("evt") as Effect.Effect<EventId>,
      }
    }),
  )
}

/** Builds ids outside Effect code (fixtures, tests): trusts the caller that the string has the right prefix. */
export const unsafe = {
  session: (s: string) => s as SessionId,
  message: (s: string) => s as MessageId,
  part: (s: string) => s as PartId,
  event: (s: string) => s as EventId,
}
