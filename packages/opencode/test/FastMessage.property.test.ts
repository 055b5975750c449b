// The hand-written message decoder (`internal/fastMessage.ts`) against its reference, the schema
// (`Export.MessageWithParts`): whenever it answers, the schema accepts the same message and builds the same value,
// keys in the same order; on valid messages it always answers. Generated messages reach every part type and tool
// state, optional keys present and absent, extra keys, edge numbers, and random corruptions of valid messages.
import { readFileSync } from "node:fs"
import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import * as Export from "../src/Export.ts"
import * as FastMessage from "../src/internal/fastMessage.ts"
import { realExportPath } from "./support/fixtures.ts"

const schemaDecode = Schema.decodeUnknownResult(Export.MessageWithParts)

/** Compares the fast decoder with the schema on `json` (as parsed JSON); answers whether the fast one answered. */
const agrees = (json: unknown): boolean => {
  const input = JSON.parse(JSON.stringify(json))
  const fast = FastMessage.decodeMessage(input)
  if (fast === undefined) return false
  const slow = schemaDecode(input)
  if (Result.isFailure(slow)) throw new Error(`the fast decoder accepted what the schema refuses: ${slow.failure}`)
  expect(fast).toStrictEqual(slow.success)
  expect(JSON.stringify(fast)).toBe(JSON.stringify(slow.success))
  return true
}

const id = (prefix: string) => fc.stringMatching(/^[0-9A-Za-z_-]{1,6}$/).map((body) => `${prefix}_${body}`)
const finite = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e21, -1),
)
const count = fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), fc.constant(-0))
const json = fc.jsonValue({ maxDepth: 2 })
const record = fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 4 })
const extra = fc.dictionary(fc.constantFrom("extra", "zz", "sessionID2", "state2"), json, { maxKeys: 2 })

/** A record with the required keys always and the others sometimes, plus unknown extra keys. */
const struct = <T extends Record<string, fc.Arbitrary<unknown>>>(
  fields: T,
  required: ReadonlyArray<keyof T & string>,
) =>
  fc.tuple(fc.record(fields, { requiredKeys: [...required] }), extra, fc.boolean()).map(([value, more, reversed]) => {
    const merged: Record<string, unknown> = { ...more, ...value }
    // Key order of the input must not matter.
    return reversed ? Object.fromEntries(Object.entries(merged).reverse()) : merged
  })

const tokens = struct(
  {
    total: count,
    input: count,
    output: count,
    reasoning: count,
    cache: struct({ read: count, write: count }, ["read", "write"]),
  },
  ["input", "output", "reasoning", "cache"],
)
const base = { id: id("prt"), sessionID: fc.string(), messageID: fc.string() }
const file = struct(
  { ...base, type: fc.constant("file"), mime: fc.string(), filename: fc.string(), url: fc.string() },
  ["id", "type", "mime", "url"],
)
const times = (keys: ReadonlyArray<string>) =>
  struct(Object.fromEntries(keys.map((key) => [key, finite])), [] as Array<string>)
const state = fc.oneof(
  struct({ status: fc.constant("pending"), input: record }, ["status", "input"]),
  struct({ status: fc.constant("running"), input: record, title: fc.string(), time: times(["start"]) }, [
    "status",
    "input",
  ]),
  struct(
    {
      status: fc.constant("completed"),
      input: record,
      output: fc.string(),
      title: fc.string(),
      metadata: record,
      time: times(["start", "end", "compacted"]),
      attachments: fc.array(file, { maxLength: 2 }),
    },
    ["status", "input", "output"],
  ),
  struct(
    {
      status: fc.constant("error"),
      input: record,
      error: fc.string(),
      metadata: record,
      time: times(["start", "end"]),
    },
    ["status", "input", "error"],
  ),
)
const part = fc.oneof(
  struct(
    {
      ...base,
      type: fc.constant("text"),
      text: fc.string(),
      synthetic: fc.boolean(),
      ignored: fc.boolean(),
      metadata: record,
    },
    ["id", "type", "text"],
  ),
  struct({ ...base, type: fc.constant("reasoning"), text: fc.string() }, ["id", "type", "text"]),
  file,
  struct({ ...base, type: fc.constant("tool"), callID: fc.string(), tool: fc.string(), state, metadata: record }, [
    "id",
    "type",
    "callID",
    "tool",
    "state",
  ]),
  struct({ ...base, type: fc.constant("step-start") }, ["id", "type"]),
  struct({ ...base, type: fc.constant("step-finish"), reason: fc.string(), tokens, cost: finite }, [
    "id",
    "type",
    "reason",
  ]),
  struct(
    { ...base, type: fc.constant("compaction"), auto: fc.boolean(), overflow: fc.boolean(), tail_start_id: id("msg") },
    ["id", "type", "auto"],
  ),
  struct({ ...base, type: fc.constant("subtask"), prompt: fc.string(), description: fc.string(), agent: fc.string() }, [
    "id",
    "type",
    "prompt",
    "description",
    "agent",
  ]),
  struct({ type: fc.constantFrom("patch", "snapshot", "agent", "retry", "x-new"), id: fc.string() }, ["type"]),
)
const userInfo = struct(
  {
    id: id("msg"),
    sessionID: fc.string(),
    role: fc.constant("user"),
    time: struct({ created: finite }, ["created"]),
    agent: fc.string(),
    model: struct({ providerID: fc.string(), modelID: fc.string(), variant: fc.string() }, ["providerID", "modelID"]),
    system: fc.string(),
  },
  ["id", "role", "time"],
)
const assistantInfo = struct(
  {
    id: id("msg"),
    sessionID: fc.string(),
    role: fc.constant("assistant"),
    parentID: id("msg"),
    time: struct({ created: finite, completed: finite }, ["created"]),
    providerID: fc.string(),
    modelID: fc.string(),
    variant: fc.string(),
    mode: fc.string(),
    agent: fc.string(),
    cost: finite,
    tokens,
    finish: fc.string(),
    error: struct({ name: fc.string(), data: json }, ["name"]),
    summary: fc.boolean(),
  },
  ["id", "role", "parentID", "time", "providerID", "modelID", "tokens"],
)
const message = struct({ info: fc.oneof(userInfo, assistantInfo), parts: fc.array(part, { maxLength: 5 }) }, [
  "info",
  "parts",
])

type Json = unknown
/** Every object and array inside a value, with a way to change each. */
const containers = (value: Json, out: Array<Record<string, Json> | Array<Json>> = []) => {
  if (typeof value === "object" && value !== null) {
    out.push(value as Record<string, Json>)
    for (const child of Object.values(value)) containers(child, out)
  }
  return out
}

/** A valid message broken in one place: a key removed, or a value replaced by any JSON value. */
const corrupted = fc
  .tuple(message, fc.nat(), fc.nat(), fc.oneof(json, fc.constant(undefined)))
  .map(([valid, where, which, replacement]) => {
    const copy = JSON.parse(JSON.stringify(valid))
    const all = containers(copy)
    const target = all[where % all.length]!
    const keys = Object.keys(target)
    if (keys.length === 0) return copy
    const key = keys[which % keys.length]!
    if (replacement === undefined && !Array.isArray(target)) delete (target as Record<string, Json>)[key]
    else (target as Record<string, Json>)[key] = replacement ?? null
    return copy
  })

describe("the fast message decoder", () => {
  it("property: on every valid message it answers, and answers what the schema answers", () => {
    fc.assert(
      fc.property(message, (m) => {
        expect(agrees(m)).toBe(true)
      }),
      runs(500),
    )
  })

  it("property: on a message broken in one place, whenever it answers, the schema accepts it with the same value", () => {
    const cases = runs(1000)
    let refused = 0
    fc.assert(
      fc.property(corrupted, (m) => {
        if (!agrees(m)) refused++
      }),
      cases,
    )
    // The corruptions do reach the refusals (the schema then judges and names the field): more than a tenth of them.
    expect(refused).toBeGreaterThan(cases.numRuns / 10)
  })

  it("given every message of the real export, then it answers the schema's value", () => {
    const exported = JSON.parse(readFileSync(realExportPath, "utf8")) as { messages: Array<unknown> }
    for (const m of exported.messages) expect(agrees(m)).toBe(true)
  })

  it("refuses what only the schema may judge: a record with a __proto__ key, a malformed id, a wrong role", () => {
    const valid = { info: { id: "msg_1", role: "user", time: { created: 1 } }, parts: [] }
    expect(agrees(valid)).toBe(true)
    const withProto = JSON.parse(
      '{"info":{"id":"msg_1","role":"user","time":{"created":1}},"parts":[{"id":"prt_1","type":"text","text":"","metadata":{"__proto__":1}}]}',
    )
    expect(FastMessage.decodeMessage(withProto)).toBeUndefined()
    expect(FastMessage.decodeMessage({ ...valid, info: { ...valid.info, id: "msg_" } })).toBeUndefined()
    expect(FastMessage.decodeMessage({ ...valid, info: { ...valid.info, id: "msg_a b" } })).toBeUndefined()
    expect(FastMessage.decodeMessage({ ...valid, info: { ...valid.info, role: "system" } })).toBeUndefined()
  })
})
