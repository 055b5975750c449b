/**
 * A hand-written decoder of one exported message (`Export.MessageWithParts`) for the common case, used by
 * `Export.decodeExportBytes` before the schema: the generic schema interpreter costs ~15 µs per message, a third of
 * a big import's decoding. It accepts only what the schema accepts and builds the very value the schema builds (the
 * declared keys in the schema's order, records copied, unknown values shared); anything it is unsure of answers
 * `undefined`, and the schema decides (and names the bad field). `test/FastMessage.property.test.ts` checks that it
 * equals the schema on generated and mutated messages and on every message of the real export.
 *
 * Input is parsed JSON: no `undefined` values, no accessors, no prototypes but `Object.prototype`.
 */

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const isFiniteNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value)
const isCount = (value: unknown): value is number => isFiniteNumber(value) && value >= 0

const ID_BODY = /^[0-9A-Za-z_-]+$/
const isId = (prefix: string, value: unknown): value is string =>
  typeof value === "string" && value.startsWith(prefix) && ID_BODY.test(value.slice(prefix.length))

/** A failure: the schema judges the message instead. */
class Unsure extends Error {}
const unsure = new Unsure()

const need = <A>(ok: boolean, value: A): A => {
  if (!ok) throw unsure
  return value
}

/** Copies an optional key when present and valid; a present key failing `ok` is unsure. */
const optional = (out: Json, from: Json, key: string, ok: (value: unknown) => boolean) => {
  const value = from[key]
  if (value === undefined) return
  if (!ok(value)) throw unsure
  out[key] = value
}

const isString = (value: unknown): value is string => typeof value === "string"
const isBoolean = (value: unknown): value is boolean => typeof value === "boolean"

// Schema.Record(Schema.String, Schema.Unknown): a fresh object with the same keys, values shared.
const record = (value: unknown): Json => {
  if (!isObject(value)) throw unsure
  const out: Json = {}
  for (const key of Object.keys(value)) {
    if (key === "__proto__") throw unsure
    out[key] = value[key]
  }
  return out
}
const optionalRecord = (out: Json, from: Json, key: string) => {
  const value = from[key]
  if (value !== undefined) out[key] = record(value)
}

const tokens = (value: unknown): Json => {
  if (!isObject(value)) throw unsure
  const out: Json = {}
  optional(out, value, "total", isCount)
  out.input = need(isCount(value.input), value.input)
  out.output = need(isCount(value.output), value.output)
  out.reasoning = need(isCount(value.reasoning), value.reasoning)
  const cache = value.cache
  if (!isObject(cache) || !isCount(cache.read) || !isCount(cache.write)) throw unsure
  out.cache = { read: cache.read, write: cache.write }
  return out
}

/** The keys every part starts with, in the schema's order; then its `type`. */
const partHead = (part: Json): Json => {
  const out: Json = { id: need(isId("prt_", part.id), part.id) }
  optional(out, part, "sessionID", isString)
  optional(out, part, "messageID", isString)
  out.type = part.type
  return out
}

const string = (out: Json, from: Json, key: string) => {
  out[key] = need(isString(from[key]), from[key])
}

const filePart = (part: unknown): Json => {
  if (!isObject(part) || part.type !== "file") throw unsure
  const out = partHead(part)
  string(out, part, "mime")
  optional(out, part, "filename", isString)
  string(out, part, "url")
  return out
}

const times = (value: unknown, keys: ReadonlyArray<string>): Json => {
  if (!isObject(value)) throw unsure
  const out: Json = {}
  for (const key of keys) optional(out, value, key, isFiniteNumber)
  return out
}

const toolState = (state: unknown): Json => {
  if (!isObject(state)) throw unsure
  const out: Json = { status: state.status, input: record(state.input) }
  switch (state.status) {
    case "pending":
      return out
    case "running":
      optional(out, state, "title", isString)
      if (state.time !== undefined) out.time = times(state.time, ["start"])
      return out
    case "completed":
      string(out, state, "output")
      optional(out, state, "title", isString)
      optionalRecord(out, state, "metadata")
      if (state.time !== undefined) out.time = times(state.time, ["start", "end", "compacted"])
      if (state.attachments !== undefined) {
        if (!Array.isArray(state.attachments)) throw unsure
        out.attachments = state.attachments.map(filePart)
      }
      return out
    case "error":
      string(out, state, "error")
      optionalRecord(out, state, "metadata")
      if (state.time !== undefined) out.time = times(state.time, ["start", "end"])
      return out
    default:
      throw unsure
  }
}

const MODELED = new Set(["text", "reasoning", "file", "tool", "step-start", "step-finish", "compaction", "subtask"])

const part = (value: unknown): Json => {
  if (!isObject(value) || !isString(value.type)) throw unsure
  if (!MODELED.has(value.type)) {
    // OtherPart: `type`, then an optional string `id`.
    const out: Json = { type: value.type }
    optional(out, value, "id", isString)
    return out
  }
  if (value.type === "file") return filePart(value)
  const out = partHead(value)
  switch (value.type) {
    case "text":
      string(out, value, "text")
      optional(out, value, "synthetic", isBoolean)
      optional(out, value, "ignored", isBoolean)
      optionalRecord(out, value, "metadata")
      return out
    case "reasoning":
      string(out, value, "text")
      return out
    case "tool":
      string(out, value, "callID")
      string(out, value, "tool")
      out.state = toolState(value.state)
      optionalRecord(out, value, "metadata")
      return out
    case "step-start":
      return out
    case "step-finish":
      string(out, value, "reason")
      if (value.tokens !== undefined) out.tokens = tokens(value.tokens)
      optional(out, value, "cost", isFiniteNumber)
      return out
    case "compaction":
      out.auto = need(isBoolean(value.auto), value.auto)
      optional(out, value, "overflow", isBoolean)
      optional(out, value, "tail_start_id", (id) => isId("msg_", id))
      return out
    default: // subtask
      string(out, value, "prompt")
      string(out, value, "description")
      string(out, value, "agent")
      return out
  }
}

const info = (value: unknown): Json => {
  if (!isObject(value)) throw unsure
  const out: Json = { id: need(isId("msg_", value.id), value.id) }
  optional(out, value, "sessionID", isString)
  out.role = value.role
  const time = value.time
  if (!isObject(time) || !isFiniteNumber(time.created)) throw unsure
  if (value.role === "user") {
    out.time = { created: time.created }
    optional(out, value, "agent", isString)
    const model = value.model
    if (model !== undefined) {
      if (!isObject(model) || !isString(model.providerID) || !isString(model.modelID)) throw unsure
      const m: Json = { providerID: model.providerID, modelID: model.modelID }
      optional(m, model, "variant", isString)
      out.model = m
    }
    optional(out, value, "system", isString)
    return out
  }
  if (value.role !== "assistant") throw unsure
  out.parentID = need(isId("msg_", value.parentID), value.parentID)
  const t: Json = { created: time.created }
  optional(t, time, "completed", isFiniteNumber)
  out.time = t
  string(out, value, "providerID")
  string(out, value, "modelID")
  optional(out, value, "variant", isString)
  optional(out, value, "mode", isString)
  optional(out, value, "agent", isString)
  optional(out, value, "cost", isFiniteNumber)
  out.tokens = tokens(value.tokens)
  optional(out, value, "finish", isString)
  const error = value.error
  if (error !== undefined) {
    if (!isObject(error) || !isString(error.name)) throw unsure
    const e: Json = { name: error.name }
    if (error.data !== undefined) e.data = error.data
    out.error = e
  }
  optional(out, value, "summary", isBoolean)
  return out
}

/**
 * The message as `Schema.decodeUnknown(Export.MessageWithParts)` would give it, or `undefined` when the schema must
 * judge it (the message is invalid, or unusual in a way this decoder does not handle).
 */
export const decodeMessage = (json: unknown): unknown => {
  try {
    if (!isObject(json) || !Array.isArray(json.parts)) return undefined
    return { info: info(json.info), parts: json.parts.map(part) }
  } catch (error) {
    if (error === unsure) return undefined
    throw error
  }
}
