/**
 * Branded, prefixed, sortable identifiers and the `Ids` service that makes them.
 *
 * An id is `<prefix>_<12 hex: time·4096 + counter><14 base62 random>`; comparing two ids of the same kind as strings
 * gives their creation order, as in OpenCode. Domain code never calls `Date.now` or `Math.random`: ids arrive on
 * commands, made by this service from `Clock` and `Random`.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"

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
          // The generator read once, then 14 draws of `Random.nextIntBetween(0, 62)` (the same values, in the same
          // order) without an effect each: they were a measurable share of recording a step (issue 23).
          const generator = yield* Random.Random
          const random: Array<number> = []
          for (let i = 0; i < 14; i++) random.push(Math.floor(generator.nextDoubleUnsafe() * 63))
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

/**
 * The id of a message's part at `index` when the caller gave the message's id but not the part's: derived from both,
 * so a retry of the same input (`{ id, text }`) names the same parts and is recognised as the same message. Sorts by
 * index within the message (up to a million parts).
 */
export const partOf = (message: MessageId, index: number): PartId =>
  `prt_${message.slice(4)}-${String(index).padStart(6, "0")}` as PartId

/** Builds ids outside Effect code (fixtures, tests): trusts the caller that the string has the right prefix. */
export const unsafe = {
  session: (s: string) => s as SessionId,
  message: (s: string) => s as MessageId,
  part: (s: string) => s as PartId,
  event: (s: string) => s as EventId,
}

/** The longest session name `sessionIdOf` maps (a name is a label, not a document). */
export const MAX_SESSION_NAME = 256

const isSessionId = Schema.is(SessionId)
const SAFE_NAME = /^[0-9A-Za-z_-]+$/
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what the rule refuses
const CONTROL = /[\u0000-\u001f\u007f]/

// FNV-1a (32 bit) over the name's UTF-16 units, twice with different offsets: 16 hex digits, stable everywhere.
const fnv = (text: string, offset: number): string => {
  let hash = offset >>> 0
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, "0")
}

/**
 * The session id a human-chosen session name stands for, or `undefined` when the name cannot be one (empty, blank,
 * longer than `MAX_SESSION_NAME`, or holding control characters). A name that is already a session id is used as
 * is; a name of letters, digits, `_` and `-` becomes `ses_<name>`; any other name becomes `ses_<its safe
 * letters>-<16 hex of its hash>`, so two different names never share a session and the same name always finds its own.
 *
 * **Example**
 * ```ts
 * Ids.sessionIdOf("fix-the-test") // "ses_fix-the-test"
 * Ids.sessionIdOf("Fix the test!") // "ses_Fix_the_test-<16 hex>"
 * ```
 */
export const sessionIdOf = (name: string): SessionId | undefined => {
  if (typeof name !== "string" || name.trim() === "" || name.length > MAX_SESSION_NAME || CONTROL.test(name))
    return undefined
  if (isSessionId(name)) return name
  if (SAFE_NAME.test(name)) return `ses_${name}` as SessionId
  const safe = name
    .replace(/[^0-9A-Za-z_-]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 48)
  return `ses_${safe === "" ? "" : `${safe}-`}${fnv(name, 0x811c9dc5)}${fnv(name, 0x050c5d1f)}` as SessionId
}
