import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import { type RecordedEvent, Upcast } from "../src/index.ts"
import decodedFixture from "./fixtures/upcast/decoded.json" with { type: "json" }
import recordedFixture from "./fixtures/upcast/recorded.json" with { type: "json" }

// A small domain: NoteWritten went v1 { text } → v2 { body, format } → v3 { body, format, tags }.
const schemas = {
  NoteWritten: {
    version: 3,
    schema: Schema.Struct({
      body: Schema.String,
      format: Schema.Literals(["plain", "markdown"]),
      tags: Schema.Array(Schema.String),
    }),
  },
  NoteDeleted: { version: 1, schema: Schema.Struct({ index: Schema.Number }) },
}
const upcasters: ReadonlyArray<Upcast.Upcaster> = [
  { type: "NoteWritten", fromVersion: 1, up: (data: any) => ({ body: data.text, format: "plain" }) },
  { type: "NoteWritten", fromVersion: 2, up: (data: any) => ({ ...data, tags: [] }) },
]
const decode = Upcast.makeDecoder({ schemas, upcasters })

const recorded = (type: string, version: number, data: unknown): RecordedEvent => ({
  id: "evt_x",
  type,
  version,
  data,
  metadata: null,
  stream: "s",
  streamVersion: 1,
  position: 1,
  recordedAt: 0,
})

describe("Upcast.decodeRecorded", () => {
  it("the golden fixtures (every stored version) decode to the current schemas", () => {
    const decoded = (recordedFixture as ReadonlyArray<RecordedEvent>).map((event) =>
      Result.getOrThrow(Upcast.decodeRecorded(event, { schemas, upcasters })),
    )
    expect(decoded.map(({ id, type, data }) => ({ id, type, data }))).toEqual(decodedFixture)
    // Everything but the data is kept as recorded (version stays the stored one).
    expect(decoded.map((e) => [e.position, e.version, e.metadata])).toEqual([
      [1, 1, null],
      [2, 2, { actor: "user" }],
      [3, 3, null],
      [4, 1, null],
    ])
  })

  it("an event at the current version is decoded without upcasting", () => {
    const result = decode(recorded("NoteDeleted", 1, { index: 3 }))
    expect(Result.getOrThrow(result)).toMatchObject({ type: "NoteDeleted", data: { index: 3 } })
  })

  it("property: decoding a v1 event equals decoding the v3 event its upcasters produce", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const fromV1 = Result.getOrThrow(decode(recorded("NoteWritten", 1, { text })))
        const fromV3 = Result.getOrThrow(decode(recorded("NoteWritten", 3, { body: text, format: "plain", tags: [] })))
        expect(fromV1.data).toEqual(fromV3.data)
      }),
      runs(1000),
    )
  })

  it("an unknown event type fails with UnknownEventType", () => {
    const result = decode(recorded("NoteArchived", 1, {}))
    expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "UnknownEventType", type: "NoteArchived" })
  })

  it("a type inherited from Object.prototype is still unknown", () => {
    const result = decode(recorded("toString", 1, {}))
    expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "UnknownEventType", type: "toString" })
  })

  it("an event from a newer schema version fails with EventFromNewerVersion", () => {
    const result = decode(recorded("NoteWritten", 4, { body: "x", format: "plain", tags: [], pinned: true }))
    expect(Result.isFailure(result) && result.failure).toMatchObject({
      _tag: "EventFromNewerVersion",
      type: "NoteWritten",
      version: 4,
      supported: 3,
    })
  })

  it("a gap in the upcaster chain fails with MissingUpcaster naming the missing step", () => {
    const broken = Upcast.makeDecoder({ schemas, upcasters: upcasters.slice(0, 1) })
    const result = broken(recorded("NoteWritten", 1, { text: "t" }))
    expect(Result.isFailure(result) && result.failure).toMatchObject({
      _tag: "MissingUpcaster",
      type: "NoteWritten",
      fromVersion: 2,
    })
  })

  it("data not matching the schema fails with MalformedEvent naming the field's path", () => {
    const result = decode(recorded("NoteWritten", 3, { body: "x", format: "plain", tags: ["ok", 7] }))
    expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "MalformedEvent", path: "data.tags[1]" })
  })

  it("a stored version that is not an integer ≥ 1 fails with MalformedEvent at version", () => {
    const result = decode(recorded("NoteDeleted", 0, { index: 1 }))
    expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "MalformedEvent", path: "version" })
  })

  it("an upcaster that throws fails with MalformedEvent instead of crashing", () => {
    const result = decode(recorded("NoteWritten", 1, null))
    expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "MalformedEvent", path: "data" })
  })

  it("two upcasters for the same step are refused when the decoder is built", () => {
    expect(() => Upcast.makeDecoder({ schemas, upcasters: [...upcasters, upcasters[0]!] })).toThrow(/two upcasters/)
  })

  describe("a type's fast decoder", () => {
    // Answers plain notes itself (as the schema would), leaves anything else to the schema; counts what it was given.
    const seen: Array<unknown> = []
    const fast = (data: unknown) => {
      seen.push(data)
      const note = data as { body?: unknown; format?: unknown; tags?: unknown }
      return note.format === "plain" &&
        typeof note.body === "string" &&
        Array.isArray(note.tags) &&
        note.tags.length === 0
        ? { body: note.body, format: "plain", tags: [] }
        : undefined
    }
    const withFast = Upcast.makeDecoder({
      schemas: { ...schemas, NoteWritten: { ...schemas.NoteWritten, fast } },
      upcasters,
    })

    it("when it answers, then its value is the event's data", () => {
      const result = withFast(recorded("NoteWritten", 3, { body: "b", format: "plain", tags: [], extra: 1 }))
      expect(Result.getOrThrow(result)).toMatchObject({ type: "NoteWritten", version: 3 })
      expect(Result.getOrThrow(result).data).toStrictEqual({ body: "b", format: "plain", tags: [] })
    })

    it("given an older version, then it is handed the upcast data", () => {
      seen.length = 0
      const result = withFast(recorded("NoteWritten", 1, { text: "old" }))
      expect(seen).toEqual([{ body: "old", format: "plain", tags: [] }])
      expect(Result.getOrThrow(result).data).toStrictEqual({ body: "old", format: "plain", tags: [] })
    })

    it("when it leaves the data to the schema, then the schema decodes it or names what is wrong, as without it", () => {
      for (const data of [
        { body: "x", format: "markdown", tags: ["a"] },
        { body: "x", format: "plain", tags: ["ok", 7] },
        { body: 1, format: "plain", tags: [] },
      ]) {
        const event = recorded("NoteWritten", 3, data)
        expect(withFast(event)).toStrictEqual(decode(event))
      }
      expect(Result.isFailure(withFast(recorded("NoteWritten", 3, { body: 1, format: "plain", tags: [] })))).toBe(true)
    })

    it("is not asked before the version and upcaster checks", () => {
      seen.length = 0
      expect(Result.isFailure(withFast(recorded("NoteWritten", 4, { body: "b", format: "plain", tags: [] })))).toBe(
        true,
      )
      expect(Result.isFailure(withFast(recorded("NoteWritten", 0, { body: "b", format: "plain", tags: [] })))).toBe(
        true,
      )
      expect(seen).toEqual([])
    })
  })
})
