// Crypto-shredding, the codec: chosen string fields of an event's data are encrypted with its stream's key
// (AES-256-GCM, a fresh 96-bit IV per field, the stream name as associated data). A sealed field is a string
// envelope, so the payload keeps its JSON shape and every schema still decodes it. Deleting the stream's key (forget)
// makes every envelope of the stream unreadable for good: reads then show `ERASED` in its place.
import * as Effect from "effect/Effect"
import type { FieldPath, RecordedEvent, SerializedEvent } from "../Event.ts"
import { StoreCorrupt } from "../StoreError.ts"
import { crypto } from "./nodeCrypto.ts"

/** What a sealed field reads as once its stream's key is deleted. */
export const ERASED = "[ERASED]"

/** A stream's data key: its id (written in every envelope) and the 32 key bytes. */
export interface StreamKey {
  readonly id: string
  readonly key: Uint8Array
}

const PREFIX = "pivot:sealed:v1:"
// pivot:sealed:v1:<key id, 32 hex>:<iv, 16 base64url>:<ciphertext + 16-byte tag, base64url>
const ENVELOPE = /^pivot:sealed:v1:([0-9a-f]{32}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22,})$/

/** A new random key for a stream. */
export const newKey = (): StreamKey => ({ id: crypto().randomBytes(16).toString("hex"), key: crypto().randomBytes(32) })

/** A key as stored in the key table (base64 text). */
export const encodeKey = (key: Uint8Array): string => Buffer.from(key).toString("base64")

/** A key from the key table. */
export const decodeKey = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "base64"))

const encrypt = (key: StreamKey, stream: string, plain: string): string => {
  const iv = crypto().randomBytes(12)
  const cipher = crypto().createCipheriv("aes-256-gcm", key.key, iv)
  cipher.setAAD(Buffer.from(stream, "utf8"))
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()])
  return `${PREFIX}${key.id}:${iv.toString("base64url")}:${body.toString("base64url")}`
}

const decrypt = (key: StreamKey, stream: string, iv: string, body: string): string => {
  const bytes = Buffer.from(body, "base64url")
  const decipher = crypto().createDecipheriv("aes-256-gcm", key.key, Buffer.from(iv, "base64url"))
  decipher.setAAD(Buffer.from(stream, "utf8"))
  decipher.setAuthTag(bytes.subarray(bytes.length - 16))
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8")
}

/** Whether any string at `path` (or below its end) of `data` would be sealed. Pure. */
export const hasSealable = (data: unknown, paths: ReadonlyArray<FieldPath>): boolean => {
  let found = false
  for (const path of paths) {
    visit(data, path, 0, (value) => {
      found ||= value.length > 0
      return value
    })
    if (found) return true
  }
  return false
}

/** `data` with every non-empty string at the paths encrypted (a copy; `data` is untouched). */
export const sealData = (data: unknown, paths: ReadonlyArray<FieldPath>, key: StreamKey, stream: string): unknown => {
  let out = data
  for (const path of paths)
    out = visit(out, path, 0, (value) => (value.length === 0 ? value : encrypt(key, stream, value)))
  return out
}

/**
 * The JSON each event of a batch is stored with: sealed with the stream's key where the event asks for it.
 * `keyFor` (find or create the stream's key) runs once, and only when some field is to be sealed.
 */
export const storedData = <E, R>(
  stream: string,
  events: ReadonlyArray<SerializedEvent>,
  keyFor: Effect.Effect<StreamKey, E, R>,
): Effect.Effect<ReadonlyArray<string>, E, R> =>
  Effect.gen(function* () {
    const toSeal = events.map((e) => e.sealed !== undefined && hasSealable(e.sealed.data, e.sealed.paths))
    if (!toSeal.includes(true)) return events.map((e) => e.data)
    const key = yield* keyFor
    return yield* Effect.sync(() =>
      events.map((e, i) =>
        toSeal[i] && e.sealed !== undefined
          ? JSON.stringify(sealData(e.sealed.data, e.sealed.paths, key, stream))
          : e.data,
      ),
    )
  })

/**
 * Opens the sealed fields of recorded events. `stored[i]` is event i's data as stored (to find envelopes without
 * walking every payload); `keysOf` looks up the current keys of the streams that need one.
 */
export const openRecorded = <E, R>(
  events: ReadonlyArray<RecordedEvent>,
  stored: ReadonlyArray<string>,
  keysOf: (streams: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, StreamKey>, E, R>,
): Effect.Effect<ReadonlyArray<RecordedEvent>, E | StoreCorrupt, R> =>
  Effect.gen(function* () {
    const sealed = stored.map(mayBeSealed)
    if (!sealed.includes(true)) return events
    const keys = yield* keysOf([...new Set(events.filter((_, i) => sealed[i]).map((e) => e.stream))])
    const out: Array<RecordedEvent> = []
    for (const [i, event] of events.entries()) {
      if (!sealed[i]) out.push(event)
      else {
        const where = `event ${event.id} (${event.stream}@${event.streamVersion})`
        const data = yield* unsealData(event.data, keys.get(event.stream), event.stream, where)
        out.push({ ...event, data })
      }
    }
    return out
  })

// Applies `f` to every string at `path` from segment `at` (every string below the path's end), copying what changes.
const visit = (value: unknown, path: FieldPath, at: number, f: (value: string) => string): unknown => {
  if (at === path.length) return deep(value, f)
  if (typeof value !== "object" || value === null) return value
  const segment = path[at]!
  if (Array.isArray(value)) {
    if (segment !== "*") return value
    let changed = false
    const out = value.map((item) => {
      const next = visit(item, path, at + 1, f)
      if (next !== item) changed = true
      return next
    })
    return changed ? out : value
  }
  const record = value as Record<string, unknown>
  const keys = segment === "*" ? Object.keys(record) : Object.hasOwn(record, segment) ? [segment] : []
  let out: Record<string, unknown> | undefined
  for (const k of keys) {
    const next = visit(record[k], path, at + 1, f)
    if (next !== record[k]) {
      out ??= { ...record }
      out[k] = next
    }
  }
  return out ?? value
}

const deep = (value: unknown, f: (value: string) => string): unknown => {
  if (typeof value === "string") return f(value)
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) {
    let changed = false
    const out = value.map((item) => {
      const next = deep(item, f)
      if (next !== item) changed = true
      return next
    })
    return changed ? out : value
  }
  let out: Record<string, unknown> | undefined
  for (const [k, item] of Object.entries(value)) {
    const next = deep(item, f)
    if (next !== item) {
      out ??= { ...(value as Record<string, unknown>) }
      out[k] = next
    }
  }
  return out ?? value
}

/** Whether stored JSON text may hold a sealed field (a cheap test before parsing and walking it). */
export const mayBeSealed = (json: string): boolean => json.includes(PREFIX)

/**
 * `data` with every envelope opened with `key` (the stream's current key): an envelope of another key id, or of a
 * stream with no key, reads as `ERASED`. An envelope of the current key that does not open is corruption.
 */
export const unsealData = (
  data: unknown,
  key: StreamKey | undefined,
  stream: string,
  where: string,
): Effect.Effect<unknown, StoreCorrupt> =>
  Effect.try({
    try: () =>
      deep(data, (value) => {
        if (!value.startsWith(PREFIX)) return value
        const match = ENVELOPE.exec(value)
        if (match === null) return value
        if (key === undefined || key.id !== match[1]) return ERASED
        return decrypt(key, stream, match[2]!, match[3]!)
      }),
    catch: (cause) =>
      new StoreCorrupt({ reason: `${where}: a sealed field does not open with its stream's key (${String(cause)})` }),
  })
