// The hand-written encoder of message events (`internal/fastEncode.ts`) against its reference, the schema's encoder
// (`Schema.encodeSync(Events.Event)`): whenever it answers, the schema encodes the same event to the same value, keys
// in the same order; on valid message events it always answers. Generated events reach every part type and tool
// state, optional keys present and absent, extra keys, edge numbers; corrupted ones add `undefined` values, wrong
// types and class instances. The same walk as a decoder (`decodeMessageEvent`, what a restart decodes the events after
// its snapshot with) against the schema's decoder of each event type: the same values on stored (JSON) data, and
// every datum the schema refuses refused (left to the schema, which names what is wrong).
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Events } from "@pivot/core"
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeMessageEvent } from "../src/internal/fastEncode.ts"
import { runs } from "./support/runs.ts"
import { generatedArb } from "./support/sessions.ts"

const union = Schema.encodeSync(Events.Event)

/** Compares the fast encoder with the schema's on `event`; answers whether the fast one answered. */
const agrees = (event: unknown): boolean => {
  const fast = encodeMessageEvent(event)
  if (fast === undefined) return false
  let reference: unknown
  try {
    reference = union(event as Events.Event)
  } catch (error) {
    throw new Error(`the fast encoder accepted what the schema refuses: ${error}`)
  }
  expect(fast).toStrictEqual(reference)
  expect(JSON.stringify(fast)).toBe(JSON.stringify(reference))
  return true
}

const id = (prefix: string) => fc.stringMatching(/^[0-9A-Za-z_-]{1,6}$/).map((body) => `${prefix}_${body}`)
const finite = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e21))
const count = fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), fc.constant(-0))
const json = fc.jsonValue({ maxDepth: 2 })
const record = fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 4 })
const extra = fc.dictionary(fc.constantFrom("extra", "zz", "messageId"), json, { maxKeys: 2 })

/** The required keys always, the others sometimes, plus extra keys the encoder drops. */
const struct = <T extends Record<string, fc.Arbitrary<unknown>>>(
  fields: T,
  required: ReadonlyArray<keyof T & string>,
) =>
  fc.tuple(fc.record(fields, { requiredKeys: [...required] }), extra, fc.boolean()).map(([value, more, reversed]) => {
    const merged: Record<string, unknown> = { ...more, ...value }
    return reversed ? Object.fromEntries(Object.entries(merged).reverse()) : merged
  })

const tokens = struct(
  { input: count, output: count, reasoning: count, cacheRead: count, cacheWrite: count, total: count },
  ["input", "output", "reasoning", "cacheRead", "cacheWrite"],
)
const model = struct({ providerId: fc.string(), modelId: fc.string(), variant: fc.string() }, ["providerId", "modelId"])
const file = struct(
  { type: fc.constant("file"), id: id("prt"), mime: fc.string(), filename: fc.string(), url: fc.string() },
  ["type", "id", "mime", "url"],
)
const text = struct(
  {
    type: fc.constant("text"),
    id: id("prt"),
    text: fc.string(),
    synthetic: fc.boolean(),
    ignored: fc.boolean(),
    metadata: record,
  },
  ["type", "id", "text"],
)
const state = fc.oneof(
  struct({ status: fc.constant("pending"), input: record }, ["status", "input"]),
  struct({ status: fc.constant("running"), input: record, title: fc.string(), startedAt: finite }, ["status", "input"]),
  struct(
    {
      status: fc.constant("completed"),
      input: record,
      output: fc.string(),
      title: fc.string(),
      metadata: record,
      attachments: fc.array(file, { maxLength: 2 }),
      startedAt: finite,
      endedAt: finite,
      compactedAt: finite,
      inputClearedAt: finite,
    },
    ["status", "input", "output"],
  ),
  struct(
    {
      status: fc.constant("error"),
      input: record,
      error: fc.string(),
      metadata: record,
      startedAt: finite,
      endedAt: finite,
      inputClearedAt: finite,
    },
    ["status", "input", "error"],
  ),
)
const userPart = fc.oneof(
  text,
  file,
  struct(
    {
      type: fc.constant("compaction"),
      id: id("prt"),
      auto: fc.boolean(),
      overflow: fc.boolean(),
      tailStartId: id("msg"),
    },
    ["type", "id", "auto"],
  ),
  struct(
    { type: fc.constant("subtask"), id: id("prt"), prompt: fc.string(), description: fc.string(), agent: fc.string() },
    ["type", "id", "prompt", "description", "agent"],
  ),
)
const assistantPart = fc.oneof(
  text,
  file,
  struct({ type: fc.constant("reasoning"), id: id("prt"), text: fc.string() }, ["type", "id", "text"]),
  struct(
    {
      type: fc.constant("tool"),
      id: id("prt"),
      callId: fc.string(),
      tool: fc.string(),
      state,
      providerExecuted: fc.boolean(),
    },
    ["type", "id", "callId", "tool", "state"],
  ),
  struct({ type: fc.constant("step-start"), id: id("prt") }, ["type", "id"]),
  struct({ type: fc.constant("step-finish"), id: id("prt"), reason: fc.string(), tokens }, ["type", "id", "reason"]),
)
const user = struct(
  {
    role: fc.constant("user"),
    id: id("msg"),
    createdAt: finite,
    agent: fc.string(),
    model,
    system: fc.string(),
    parts: fc.array(userPart, { maxLength: 4 }),
  },
  ["role", "id", "createdAt", "parts"],
)
const assistant = struct(
  {
    role: fc.constant("assistant"),
    id: id("msg"),
    parentId: id("msg"),
    createdAt: finite,
    completedAt: finite,
    model,
    agent: fc.string(),
    mode: fc.string(),
    tokens,
    cost: finite,
    finish: fc.string(),
    error: struct({ name: fc.string(), message: fc.string(), data: json }, ["name", "message"]),
    summary: fc.boolean(),
    parts: fc.array(assistantPart, { maxLength: 5 }),
  },
  ["role", "id", "parentId", "createdAt", "model", "tokens", "parts"],
)
const messageEvent = fc.oneof(
  struct({ _tag: fc.constant("UserMessageAdded"), at: finite, message: user }, ["_tag", "at", "message"]),
  struct({ _tag: fc.constant("AssistantStepRecorded"), at: finite, message: assistant }, ["_tag", "at", "message"]),
)

const reason = fc.constantFrom("threshold", "provider-overflow", "rent-or-buy", "user", "model")
const plan = struct(
  {
    head: fc.array(id("msg"), { maxLength: 3 }),
    tail: fc.array(id("msg"), { maxLength: 3 }),
    tailStartId: id("msg"),
    previousSummary: fc.string(),
    replayOf: id("msg"),
  },
  ["head", "tail"],
)
/** The compaction events a restart finds after its snapshot, each type decoded by hand too (ADR 0055). */
const compactionEvent = fc.oneof(
  struct({ _tag: fc.constant("CompactionRequested"), at: finite, marker: user, reason }, ["_tag", "at", "marker"]),
  struct(
    {
      _tag: fc.constant("CompactionStarted"),
      at: finite,
      markerId: id("msg"),
      summaryId: id("msg"),
      model,
      plan,
      prompt: fc.string(),
      pluginContext: fc.array(fc.string(), { maxLength: 3 }),
    },
    ["_tag", "at", "markerId", "summaryId", "model", "plan", "prompt"],
  ),
  struct({ _tag: fc.constant("SummaryFinished"), at: finite, markerId: id("msg"), summary: assistant }, [
    "_tag",
    "at",
    "markerId",
    "summary",
  ]),
  struct({ _tag: fc.constant("ContinueRequested"), at: finite, markerId: id("msg"), message: user }, [
    "_tag",
    "at",
    "markerId",
    "message",
  ]),
  struct(
    {
      _tag: fc.constant("PartCompacted"),
      at: finite,
      messageId: id("msg"),
      partId: id("prt"),
      tokens: finite,
      rule: fc.string(),
      reason: fc.string(),
      target: fc.constant("input"),
    },
    ["_tag", "at", "messageId", "partId", "tokens"],
  ),
  struct(
    {
      _tag: fc.constant("ToolResultRecorded"),
      at: finite,
      messageId: id("msg"),
      partId: id("prt"),
      // A tool result is completed or failed; pending and running states are the schema's to refuse (below).
      state: state.filter((s) => s.status === "completed" || s.status === "error"),
    },
    ["_tag", "at", "messageId", "partId", "state"],
  ),
)
/** Every event type with a hand decoder. */
const decodedEvent = fc.oneof(messageEvent, compactionEvent)

class Boxed {
  readonly value = 1
}
const containers = (value: unknown, out: Array<Record<string, unknown>> = []) => {
  if (typeof value === "object" && value !== null) {
    out.push(value as Record<string, unknown>)
    for (const child of Object.values(value)) containers(child, out)
  }
  return out
}
/** A valid event broken in one place: a key removed, or a value replaced (by JSON, `undefined` or an instance). */
const corruptedOf = (valid: fc.Arbitrary<unknown>) =>
  fc
    .tuple(valid, fc.nat(), fc.nat(), fc.oneof(json, fc.constantFrom(undefined, "delete", "instance")))
    .map(([valid, where, which, replacement]) => {
      const copy = JSON.parse(JSON.stringify(valid))
      const all = containers(copy)
      const target = all[where % all.length]!
      const keys = Object.keys(target)
      if (keys.length === 0) return copy
      const key = keys[which % keys.length]!
      if (replacement === "delete" && !Array.isArray(target)) delete target[key]
      else target[key] = replacement === "instance" ? new Boxed() : replacement
      return copy
    })
const corrupted = corruptedOf(messageEvent)

describe("the fast message-event encoder", () => {
  it("property: on every valid message event it answers, and answers what the schema's encoder answers", () => {
    fc.assert(
      fc.property(messageEvent, (event) => {
        expect(agrees(JSON.parse(JSON.stringify(event)))).toBe(true)
      }),
      runs(500),
    )
  })

  it("property: on an event broken in one place, whenever it answers, the schema encodes it to the same value", () => {
    const cases = runs(1000)
    let refused = 0
    fc.assert(
      fc.property(corrupted, (event) => {
        if (!agrees(event)) refused++
      }),
      cases,
    )
    // More than a tenth of the cases are refused (the encoder falls back to the schema there).
    expect(refused).toBeGreaterThan(cases.numRuns / 10)
  })

  it("property: on the events of generated sessions, it answers every message event as the schema does", () => {
    fc.assert(
      fc.property(generatedArb(30), (generated) => {
        for (const event of generated.events)
          expect(agrees(event)).toBe(event._tag === "UserMessageAdded" || event._tag === "AssistantStepRecorded")
      }),
      { numRuns: 60 },
    )
  })

  it("given the golden fixtures, it answers the two message events as the schema does and leaves the rest to it", () => {
    const dir = join(import.meta.dirname, "fixtures/events")
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
      const event = Events.decode(JSON.parse(readFileSync(join(dir, file), "utf8")))
      expect(agrees(event)).toBe(event._tag === "UserMessageAdded" || event._tag === "AssistantStepRecorded")
    }
  })
})

type MessageTag = "UserMessageAdded" | "AssistantStepRecorded"
const TAGS: ReadonlyArray<MessageTag> = ["UserMessageAdded", "AssistantStepRecorded"]
const COMPACTION_TAGS = [
  "CompactionRequested",
  "CompactionStarted",
  "SummaryFinished",
  "ContinueRequested",
  "PartCompacted",
  "ToolResultRecorded",
] as const
type FastTag = MessageTag | (typeof COMPACTION_TAGS)[number]
const FAST_TAGS: ReadonlyArray<FastTag> = [...TAGS, ...COMPACTION_TAGS]
const schemaDecoders = Object.fromEntries(
  FAST_TAGS.map((tag) => [tag, Schema.decodeUnknownExit(Events.schemas[tag] as Schema.Codec<unknown, unknown>)]),
) as Record<FastTag, (data: unknown) => import("effect").Exit.Exit<unknown, unknown>>

/**
 * Compares `Events.fastDecoders[tag]` (the decoder the store's `Upcast` tries first) with the schema's decoder of `tag`
 * on `data`: when the fast one answers, the schema decodes `data` to the same value (keys in the same order); when the
 * schema refuses `data`, the fast one does not answer. Answers whether the fast one answered.
 */
const decodesAlike = (tag: FastTag, data: unknown): boolean => {
  const fast = Events.fastDecoders[tag]!(data)
  const reference = schemaDecoders[tag](data)
  if (fast === undefined) return false
  if (reference._tag === "Failure")
    throw new Error(`the fast decoder accepted what the schema refuses: ${JSON.stringify(reference.cause)}`)
  expect(fast).toStrictEqual(reference.value)
  expect(JSON.stringify(fast)).toBe(JSON.stringify(reference.value))
  return true
}

describe("the fast message-event decoder", () => {
  it("is the walk Events.fastDecoders gives the two message events, beside the compaction events' walks", () => {
    expect(Object.keys(Events.fastDecoders).sort()).toEqual([...FAST_TAGS].sort())
  })

  it("property: on every valid message event as stored (JSON), it answers what the schema's decoder answers", () => {
    fc.assert(
      fc.property(messageEvent, (event) => {
        const data = JSON.parse(JSON.stringify(event))
        expect(decodesAlike(data._tag, data)).toBe(true)
      }),
      runs(500),
    )
  })

  it("property: on data broken in one place, it answers only what the schema decodes, to the same value", () => {
    const cases = runs(1000)
    let refused = 0
    fc.assert(
      fc.property(corrupted, fc.boolean(), (data, asStored) => {
        // As stored: what JSON keeps of the break (an `undefined` value or an instance becomes absent or `{}`).
        const input = asStored ? JSON.parse(JSON.stringify(data)) : data
        for (const tag of TAGS) if (!decodesAlike(tag, input) && tag === input?._tag) refused++
      }),
      cases,
    )
    // More than a tenth of the cases are refused (the schema decodes or rejects them).
    expect(refused).toBeGreaterThan(cases.numRuns / 10)
    // Two decoders and two schemas per case: ~4 s at load 50 in the full lane, past vitest's default.
  }, 30_000)

  it("property: one message event's data is refused by the other's decoder, as the other's schema refuses it", () => {
    fc.assert(
      fc.property(messageEvent, (event) => {
        const data = JSON.parse(JSON.stringify(event))
        const other = TAGS.find((tag) => tag !== data._tag)!
        expect(Events.fastDecoders[other]!(data)).toBeUndefined()
        expect(schemaDecoders[other](data)._tag).toBe("Failure")
      }),
      runs(200),
    )
  })

  it("given data that is not an object, or another event type's, then it leaves it to the schema", () => {
    for (const data of [undefined, null, 1, "x", [], [{ _tag: "UserMessageAdded" }], { _tag: "SessionTitled" }])
      for (const tag of TAGS) expect(decodesAlike(tag, data)).toBe(false)
  })

  it("property: on the events of generated sessions, as the store holds them, it decodes every message event", () => {
    fc.assert(
      fc.property(generatedArb(30), (generated) => {
        for (const event of generated.events) {
          const data = JSON.parse(JSON.stringify(Events.encode(event)))
          if (event._tag === "UserMessageAdded" || event._tag === "AssistantStepRecorded") {
            expect(decodesAlike(event._tag, data)).toBe(true)
            expect(Events.fastDecoders[event._tag]!(data)).toStrictEqual(event)
          } else if ((FAST_TAGS as ReadonlyArray<string>).includes(event._tag)) {
            expect(decodesAlike(event._tag as FastTag, data)).toBe(true)
            expect(Events.fastDecoders[event._tag]!(data)).toStrictEqual(event)
          } else expect(Events.fastDecoders[event._tag]).toBeUndefined()
        }
      }),
      { numRuns: 60 },
    )
  })

  it("given the golden fixtures as stored, it decodes the two message events as the schema does", () => {
    const dir = join(import.meta.dirname, "fixtures/events")
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
      const data = JSON.parse(readFileSync(join(dir, file), "utf8"))
      for (const tag of FAST_TAGS) expect(decodesAlike(tag, data)).toBe(data._tag === tag)
    }
  })
})

// The compaction events' walks (`decodeCompactionEvent`, ADR 0055) against each type's schema decoder, as above.
describe("the fast compaction-event decoders", () => {
  it("property: on every valid compaction event as stored (JSON), each answers what the schema's decoder answers", () => {
    fc.assert(
      fc.property(compactionEvent, (event) => {
        const data = JSON.parse(JSON.stringify(event))
        expect(decodesAlike(data._tag, data)).toBe(true)
      }),
      runs(500),
    )
  })

  it("property: on data broken in one place, each answers only what its schema decodes, to the same value", () => {
    const cases = runs(1000)
    let refused = 0
    fc.assert(
      fc.property(corruptedOf(compactionEvent), fc.boolean(), (data, asStored) => {
        const input = asStored ? JSON.parse(JSON.stringify(data)) : data
        for (const tag of COMPACTION_TAGS) if (!decodesAlike(tag, input) && tag === input?._tag) refused++
      }),
      cases,
    )
    expect(refused).toBeGreaterThan(cases.numRuns / 10)
  }, 30_000)

  it("property: an event's data is refused by every other type's hand decoder, as the other schemas refuse it", () => {
    fc.assert(
      fc.property(decodedEvent, (event) => {
        const data = JSON.parse(JSON.stringify(event))
        for (const other of FAST_TAGS.filter((tag) => tag !== data._tag)) {
          expect(Events.fastDecoders[other]!(data)).toBeUndefined()
          expect(schemaDecoders[other](data)._tag).toBe("Failure")
        }
      }),
      runs(200),
    )
  })

  it("given a pending or running tool state, then ToolResultRecorded's walk leaves it to the schema, which refuses it", () => {
    for (const status of ["pending", "running"]) {
      const data = {
        _tag: "ToolResultRecorded",
        at: 1,
        messageId: "msg_a",
        partId: "prt_a",
        state: { status, input: {} },
      }
      expect(decodesAlike("ToolResultRecorded", data)).toBe(false)
      expect(schemaDecoders.ToolResultRecorded(data)._tag).toBe("Failure")
    }
  })

  it("given a reason outside the five, then CompactionRequested's walk leaves it to the schema, which refuses it", () => {
    const marker = { role: "user", id: "msg_m", createdAt: 1, parts: [] }
    for (const reason of ["threshold", "model", "other", "", null]) {
      const data = { _tag: "CompactionRequested", at: 1, marker, reason }
      const valid = typeof reason === "string" && ["threshold", "model"].includes(reason)
      expect(decodesAlike("CompactionRequested", data)).toBe(valid)
      expect(schemaDecoders.CompactionRequested(data)._tag).toBe(valid ? "Success" : "Failure")
    }
  })
})
