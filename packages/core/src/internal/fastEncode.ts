/**
 * A hand-written encoder for the events that carry a whole message (`UserMessageAdded`, `AssistantStepRecorded`):
 * nearly every event of a long session, and the bulk of an import's encoding time through the generic schema
 * interpreter. It accepts only what the schema accepts and builds the very value the schema's encoder builds (the
 * declared keys in the schema's order, records copied, unknown values shared); anything it is unsure of (another
 * event type, a key present with `undefined`, a class instance, a bad value) answers `undefined`, and the schema
 * encodes it or names what is wrong. `test/FastEncode.property.test.ts` checks it against the schema.
 *
 * The same walk decodes them (`decodeMessageEvent`): the two events' schemas transform nothing (their encoded and
 * decoded forms are the same shape: literals, strings, finite numbers, ids checked by pattern, records), so decoding
 * checks and copies exactly what encoding does. A restart decodes the events after its snapshot this way instead of
 * building the schema's parsers on their first use (issue 32); `test/FastEncode.property.test.ts` checks it against
 * the schema's decoder, rejects included.
 */

type Obj = Record<string, unknown>

/** A failure: the schema judges the event instead. */
const unsure: unique symbol = Symbol("unsure")

const isPlainObject = (value: unknown): value is Obj => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
const isFiniteNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value)
const isCount = (value: unknown): value is number => isFiniteNumber(value) && value >= 0
const isString = (value: unknown): value is string => typeof value === "string"
const isBoolean = (value: unknown): value is boolean => typeof value === "boolean"

const ID_BODY = /^[0-9A-Za-z_-]+$/
const isId = (prefix: string) => (value: unknown) =>
  typeof value === "string" && value.startsWith(prefix) && ID_BODY.test(value.slice(prefix.length))
const isPartId = isId("prt_")
const isMessageId = isId("msg_")

const object = (value: unknown): Obj => {
  if (!isPlainObject(value)) throw unsure
  return value
}

const required = (out: Obj, from: Obj, key: string, ok: (value: unknown) => boolean) => {
  const value = from[key]
  if (!ok(value)) throw unsure
  out[key] = value
}

/** An optional key: absent is fine; present (even as `undefined`) it must pass `ok`. */
const optional = (out: Obj, from: Obj, key: string, ok: (value: unknown) => boolean) => {
  const value = from[key]
  if (value === undefined) {
    if (Object.hasOwn(from, key)) throw unsure
    return
  }
  if (!ok(value)) throw unsure
  out[key] = value
}

// Schema.Record(Schema.String, Schema.Unknown): a fresh object with the same keys, values shared. Only plain
// objects whose own keys are all enumerable strings (what JSON and object literals make).
const record = (value: unknown): Obj => {
  const from = object(value)
  const keys = Object.keys(from)
  if (Object.getOwnPropertyNames(from).length !== keys.length || Object.getOwnPropertySymbols(from).length > 0)
    throw unsure
  const out: Obj = {}
  for (const key of keys) {
    if (key === "__proto__") throw unsure
    out[key] = from[key]
  }
  return out
}
const optionalWith = (out: Obj, from: Obj, key: string, encode: (value: unknown) => unknown) => {
  const value = from[key]
  if (value === undefined) {
    if (Object.hasOwn(from, key)) throw unsure
    return
  }
  out[key] = encode(value)
}

const tokenUsage = (value: unknown): Obj => {
  const from = object(value)
  const out: Obj = {}
  required(out, from, "input", isCount)
  required(out, from, "output", isCount)
  required(out, from, "reasoning", isCount)
  required(out, from, "cacheRead", isCount)
  required(out, from, "cacheWrite", isCount)
  optional(out, from, "total", isCount)
  return out
}

const modelRef = (value: unknown): Obj => {
  const from = object(value)
  const out: Obj = {}
  required(out, from, "providerId", isString)
  required(out, from, "modelId", isString)
  optional(out, from, "variant", isString)
  return out
}

const typed = (from: Obj): Obj => {
  const out: Obj = { type: from.type }
  required(out, from, "id", isPartId)
  return out
}

const textPart = (from: Obj): Obj => {
  const out = typed(from)
  required(out, from, "text", isString)
  optional(out, from, "synthetic", isBoolean)
  optional(out, from, "ignored", isBoolean)
  optionalWith(out, from, "metadata", record)
  return out
}

const filePart = (value: unknown): Obj => {
  const from = object(value)
  if (from.type !== "file") throw unsure
  const out = typed(from)
  required(out, from, "mime", isString)
  optional(out, from, "filename", isString)
  required(out, from, "url", isString)
  return out
}

const toolState = (value: unknown): Obj => {
  const from = object(value)
  const out: Obj = { status: from.status, input: record(from.input) }
  switch (from.status) {
    case "pending":
      return out
    case "running":
      optional(out, from, "title", isString)
      optional(out, from, "startedAt", isFiniteNumber)
      return out
    case "completed":
      required(out, from, "output", isString)
      optional(out, from, "title", isString)
      optionalWith(out, from, "metadata", record)
      optionalWith(out, from, "attachments", (list) => {
        if (!Array.isArray(list)) throw unsure
        return list.map(filePart)
      })
      optional(out, from, "startedAt", isFiniteNumber)
      optional(out, from, "endedAt", isFiniteNumber)
      optional(out, from, "compactedAt", isFiniteNumber)
      optional(out, from, "inputClearedAt", isFiniteNumber)
      return out
    case "error":
      required(out, from, "error", isString)
      optionalWith(out, from, "metadata", record)
      optional(out, from, "startedAt", isFiniteNumber)
      optional(out, from, "endedAt", isFiniteNumber)
      optional(out, from, "inputClearedAt", isFiniteNumber)
      return out
    default:
      throw unsure
  }
}

const userPart = (value: unknown): Obj => {
  const from = object(value)
  switch (from.type) {
    case "text":
      return textPart(from)
    case "file":
      return filePart(from)
    case "compaction": {
      const out = typed(from)
      required(out, from, "auto", isBoolean)
      optional(out, from, "overflow", isBoolean)
      optional(out, from, "tailStartId", isMessageId)
      return out
    }
    case "subtask": {
      const out = typed(from)
      required(out, from, "prompt", isString)
      required(out, from, "description", isString)
      required(out, from, "agent", isString)
      return out
    }
    default:
      throw unsure
  }
}

const assistantPart = (value: unknown): Obj => {
  const from = object(value)
  switch (from.type) {
    case "text":
      return textPart(from)
    case "reasoning": {
      const out = typed(from)
      required(out, from, "text", isString)
      return out
    }
    case "tool": {
      const out = typed(from)
      required(out, from, "callId", isString)
      required(out, from, "tool", isString)
      out.state = toolState(from.state)
      optional(out, from, "providerExecuted", isBoolean)
      return out
    }
    case "step-start":
      return typed(from)
    case "step-finish": {
      const out = typed(from)
      required(out, from, "reason", isString)
      optionalWith(out, from, "tokens", tokenUsage)
      return out
    }
    case "file":
      return filePart(from)
    default:
      throw unsure
  }
}

const parts = (value: unknown, part: (value: unknown) => Obj): Array<Obj> => {
  if (!Array.isArray(value)) throw unsure
  const out: Array<Obj> = new Array(value.length)
  for (let i = 0; i < value.length; i++) out[i] = part(value[i])
  return out
}

const userMessage = (value: unknown): Obj => {
  const from = object(value)
  if (from.role !== "user") throw unsure
  const out: Obj = { role: "user" }
  required(out, from, "id", isMessageId)
  required(out, from, "createdAt", isFiniteNumber)
  optional(out, from, "agent", isString)
  optionalWith(out, from, "model", modelRef)
  optional(out, from, "system", isString)
  out.parts = parts(from.parts, userPart)
  return out
}

const messageError = (value: unknown): Obj => {
  const from = object(value)
  const out: Obj = {}
  required(out, from, "name", isString)
  required(out, from, "message", isString)
  // Schema.Unknown: any value, `undefined` included, when the key is there.
  if (Object.hasOwn(from, "data")) out.data = from.data
  else if (from.data !== undefined) throw unsure
  return out
}

const assistantMessage = (value: unknown): Obj => {
  const from = object(value)
  if (from.role !== "assistant") throw unsure
  const out: Obj = { role: "assistant" }
  required(out, from, "id", isMessageId)
  required(out, from, "parentId", isMessageId)
  required(out, from, "createdAt", isFiniteNumber)
  optional(out, from, "completedAt", isFiniteNumber)
  out.model = modelRef(from.model)
  optional(out, from, "agent", isString)
  optional(out, from, "mode", isString)
  out.tokens = tokenUsage(from.tokens)
  optional(out, from, "cost", isFiniteNumber)
  optional(out, from, "finish", isString)
  optionalWith(out, from, "error", messageError)
  optional(out, from, "summary", isBoolean)
  out.parts = parts(from.parts, assistantPart)
  return out
}

/**
 * The encoded form of a `UserMessageAdded` or `AssistantStepRecorded` event, as `Schema.encode` of its schema gives
 * it; `undefined` for any other event, or when the schema must judge it.
 */
export const encodeMessageEvent = (event: unknown): unknown => {
  try {
    if (!isPlainObject(event)) return undefined
    const tag = event._tag
    if (tag !== "UserMessageAdded" && tag !== "AssistantStepRecorded") return undefined
    const out: Obj = { _tag: tag }
    required(out, event, "at", isFiniteNumber)
    out.message = tag === "UserMessageAdded" ? userMessage(event.message) : assistantMessage(event.message)
    return out
  } catch (error) {
    if (error === unsure) return undefined
    throw error
  }
}

/**
 * The decoded form of a stored `tag` event's data (`UserMessageAdded` or `AssistantStepRecorded`), as
 * `Schema.decodeUnknown` of that event's schema gives it; `undefined` for data of any other type (even the other
 * message event: the schema of `tag` refuses it), or when the schema must judge it (and name what is wrong).
 */
export const decodeMessageEvent =
  (tag: "UserMessageAdded" | "AssistantStepRecorded") =>
  (data: unknown): unknown =>
    isPlainObject(data) && data._tag === tag ? encodeMessageEvent(data) : undefined

// ── The compaction events a restart finds after its snapshot (issue 32, ADR 0055). Their schemas transform nothing
// either, but they hold a whole message (`CompactionRequested`'s marker, `SummaryFinished`'s summary, `ContinueRequested`'s
// continue message): decoding them by schema would build the message schemas' parsers that the message events' walk
// spares. Each walk below copies its schema's keys in the schema's order, and is checked against it by a property.

const REASONS: ReadonlyArray<unknown> = ["threshold", "provider-overflow", "rent-or-buy", "user", "model"]
const isReason = (value: unknown): boolean => REASONS.includes(value)

/** `Schema.Array(item)`: a fresh array, every element checked (holes refused, as the schema reads them undefined). */
const arrayOf = (value: unknown, ok: (value: unknown) => boolean): Array<unknown> => {
  if (!Array.isArray(value)) throw unsure
  const out: Array<unknown> = new Array(value.length)
  for (let i = 0; i < value.length; i++) {
    const item = value[i]
    if (!ok(item)) throw unsure
    out[i] = item
  }
  return out
}

const compactionPlan = (value: unknown): Obj => {
  const from = object(value)
  const out: Obj = { head: arrayOf(from.head, isMessageId), tail: arrayOf(from.tail, isMessageId) }
  optional(out, from, "tailStartId", isMessageId)
  optional(out, from, "previousSummary", isString)
  optional(out, from, "replayOf", isMessageId)
  return out
}

/** `Schema.Union([ToolCompleted, ToolError])`: a tool result's state, never pending or running. */
const toolResult = (value: unknown): Obj => {
  const from = object(value)
  if (from.status !== "completed" && from.status !== "error") throw unsure
  return toolState(from)
}

/** The body of each event after `_tag` and `at`, in its schema's key order. */
const compactionBodies = {
  CompactionRequested: (out: Obj, from: Obj) => {
    out.marker = userMessage(from.marker)
    optional(out, from, "reason", isReason)
  },
  CompactionStarted: (out: Obj, from: Obj) => {
    required(out, from, "markerId", isMessageId)
    required(out, from, "summaryId", isMessageId)
    out.model = modelRef(from.model)
    out.plan = compactionPlan(from.plan)
    required(out, from, "prompt", isString)
    optionalWith(out, from, "pluginContext", (list) => arrayOf(list, isString))
  },
  SummaryFinished: (out: Obj, from: Obj) => {
    required(out, from, "markerId", isMessageId)
    out.summary = assistantMessage(from.summary)
  },
  ContinueRequested: (out: Obj, from: Obj) => {
    required(out, from, "markerId", isMessageId)
    out.message = userMessage(from.message)
  },
  PartCompacted: (out: Obj, from: Obj) => {
    required(out, from, "messageId", isMessageId)
    required(out, from, "partId", isPartId)
    required(out, from, "tokens", isFiniteNumber)
    optional(out, from, "rule", isString)
    optional(out, from, "reason", isString)
    optional(out, from, "target", (value) => value === "input")
  },
  ToolResultRecorded: (out: Obj, from: Obj) => {
    required(out, from, "messageId", isMessageId)
    required(out, from, "partId", isPartId)
    out.state = toolResult(from.state)
  },
} as const

/** The event types `decodeCompactionEvent` walks. */
export type CompactionTag = keyof typeof compactionBodies
export const COMPACTION_TAGS = Object.keys(compactionBodies) as ReadonlyArray<CompactionTag>

/**
 * The decoded form of a stored `tag` event's data, as `Schema.decodeUnknown` of that event's schema gives it;
 * `undefined` for data of any other type, or when the schema must judge it (and name what is wrong).
 */
export const decodeCompactionEvent = (tag: CompactionTag) => {
  const body = compactionBodies[tag]
  return (data: unknown): unknown => {
    if (!isPlainObject(data) || data._tag !== tag) return undefined
    try {
      const out: Obj = { _tag: tag }
      required(out, data, "at", isFiniteNumber)
      body(out, data)
      return out
    } catch (error) {
      if (error === unsure) return undefined
      throw error
    }
  }
}
