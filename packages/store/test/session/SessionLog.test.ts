// SessionLog: core events in and out of the store, the generic decoder, and its typed errors.
import * as fs from "node:fs"
import { Events, Ids } from "@pivot/core"
import { Effect, Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../../core/test/support/runs.ts"
import { EventStore, type RecordedEvent, SessionLog } from "../../src/index.ts"
import { sessionArb } from "./support.ts"

const recorded = (type: string, version: number, data: unknown, streamVersion = 1): RecordedEvent => ({
  id: `evt_x_${streamVersion}`,
  type,
  version,
  data,
  metadata: null,
  stream: "session-ses_x",
  streamVersion,
  position: streamVersion,
  recordedAt: 0,
})

const started: Events.Event = { _tag: "SessionStarted", sessionId: Ids.unsafe.session("ses_x"), at: 1 }

const failure = (r: Result.Result<unknown, unknown>) => {
  if (Result.isSuccess(r)) throw new Error("expected a failure")
  return r.failure
}

describe("SessionLog", () => {
  it("the decoder is built from Events.schemas and Events.versions: one entry per core event type", () => {
    expect(Object.keys(SessionLog.coreSchemas).sort()).toEqual([...Events.types].sort())
    for (const type of Events.types) expect(SessionLog.coreSchemas[type]!.version).toBe(Events.versions[type])
  })

  it("given every core golden event fixture, when stored and read back, then it decodes to the same event", () => {
    const dir = new URL("../../../core/test/fixtures/events/", import.meta.url)
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json"))
    // One fixture per current event type and version (besides variants with optional fields set,
    // `<Type>.v<N>.<variant>.json`): a new core event type is covered without a change here.
    const plain = files.filter((f) => /^\w+\.v\d+\.json$/.test(f))
    expect(plain.sort()).toEqual(Events.types.map((type) => `${type}.v${Events.versions[type]}.json`).sort())
    for (const file of files) {
      const data = JSON.parse(fs.readFileSync(new URL(file, dir), "utf8"))
      const event = Events.decode(data)
      const stored = SessionLog.toNewEvent(event, "evt_golden")
      expect(stored.version).toBe(Number(/\.v(\d+)(\.[a-z-]+)?\.json$/.exec(file)![1]))
      const decoded = SessionLog.decode(recorded(stored.type, stored.version, JSON.parse(JSON.stringify(stored.data))))
      expect(decoded).toEqual(Result.succeed({ event, meta: { id: "evt_x_1", version: 1 } }))
    }
  })

  // The decoder's fast path: a payload toNewEvent made in this process is taken as the event without the schema. The
  // reference is the decoder on the stored JSON (a copy, so the fast path cannot apply: the message events then go
  // through their hand decoder, the others through their schema) and `Events.decode`, the union's schema, on it.
  const fastEqualsSchema = (event: Events.Event, streamVersion: number) => {
    const stored = SessionLog.toNewEvent(event, "evt_fast")
    const fast = SessionLog.decode(recorded(stored.type, stored.version, stored.data, streamVersion))
    const slow = SessionLog.decode(
      recorded(stored.type, stored.version, JSON.parse(JSON.stringify(stored.data)), streamVersion),
    )
    expect(Result.isSuccess(fast)).toBe(true)
    expect(fast).toStrictEqual(slow)
    // Same keys in the same order: the read models store these values as JSON.
    expect(JSON.stringify(Result.getOrThrow(fast)!.event)).toBe(JSON.stringify(Result.getOrThrow(slow)!.event))
    expect(Result.getOrThrow(slow)!.event).toStrictEqual(Events.decode(JSON.parse(JSON.stringify(stored.data))))
  }

  it("given a payload toNewEvent encoded here, the decoder's answer equals the schema's, for every golden event", () => {
    const dir = new URL("../../../core/test/fixtures/events/", import.meta.url)
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".json")))
      fastEqualsSchema(Events.decode(JSON.parse(fs.readFileSync(new URL(file, dir), "utf8"))), 1)
  })

  it("property: for generated sessions, the decoder's fast path equals the schema decoder on every event", () => {
    fc.assert(
      fc.property(sessionArb(30), (session) => {
        for (const [i, event] of session.events.entries()) fastEqualsSchema(event, i + 1)
      }),
      { numRuns: 60 },
    )
    // 60 sessions of 30 commands, each event decoded three ways: ~5 s on main at load 26, past vitest's default there.
  }, 30_000)

  it("the fast path applies only to a payload encoded here, at its type's current version and tag", () => {
    const stored = SessionLog.toNewEvent(started, "evt_fast")
    // The same payload under another type is judged by the schema (and refused), not taken as it is.
    expect(Result.isFailure(SessionLog.decode(recorded("UserMessageAdded", 1, stored.data)))).toBe(true)
    // A version other than the current one is judged as any stored event is (here: newer than this pivot reads).
    expect(failure(SessionLog.decode(recorded("SessionStarted", 2, stored.data)))).toMatchObject({
      reason: "newer-version",
    })
  })

  it("property: toNewEvent's data is Events.encode's as JSON; an event already in that form is kept, not copied", () => {
    fc.assert(
      fc.property(sessionArb(30), (session) => {
        for (const event of session.events) {
          const encoded = Events.encode(event)
          const stored = SessionLog.toNewEvent(event, "evt_same")
          expect(JSON.stringify(stored.data)).toBe(JSON.stringify(encoded))
          expect(stored.data).toStrictEqual(encoded)
          // Kept only when its JSON is the encoder's, key order included.
          if (stored.data === event) expect(JSON.stringify(event)).toBe(JSON.stringify(encoded))
        }
      }),
      { numRuns: 60 },
    )
    // The schema's key order is the stored one: an event written in another order is stored as the encoder's copy.
    const reordered = {
      at: 1,
      sessionId: Ids.unsafe.session("ses_x"),
      _tag: "SessionStarted",
    }
    const stored = SessionLog.toNewEvent(reordered as Events.Event, "evt_order")
    expect(stored.data).not.toBe(reordered)
    expect(JSON.stringify(stored.data)).toBe(JSON.stringify(Events.encode(started)))
    // An unknown key is dropped by the encoder, so such an event is copied too; a canonical one is kept.
    const extra = { ...started, note: "not in the schema" } as Events.Event
    expect(SessionLog.toNewEvent(extra, "evt_extra").data).not.toBe(extra)
    expect(SessionLog.toNewEvent(started, "evt_kept").data).toBe(started)
  })

  it("toNewEvent stamps the type and current schema version, and decode gives the event back with its meta", () => {
    const event = SessionLog.toNewEvent(started, "evt_1")
    expect(event).toEqual({ id: "evt_1", type: "SessionStarted", version: 1, data: Events.encode(started) })
    const decoded = SessionLog.decode(recorded(event.type, event.version, event.data, 7))
    expect(decoded).toEqual(Result.succeed({ event: started, meta: { id: "evt_x_7", version: 7 } }))
  })

  it("property: every generated session round-trips through the store (append per command, read back equal)", async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb(20), async (session) => {
        const log = await Effect.runPromise(
          Effect.gen(function* () {
            let version = 0
            for (const batch of session.batches) {
              const entries = batch.map((event, i) => ({ id: `evt_${version + i + 1}`, event }))
              version = (yield* SessionLog.append("ses_rt", version, entries)).streamVersion
            }
            return yield* SessionLog.read("ses_rt")
          }).pipe(Effect.provide(EventStore.layerMemory())),
        )
        expect(log.map((l) => l.event)).toEqual(session.events)
        expect(log.map((l) => l.meta)).toEqual(session.events.map((_, i) => ({ id: `evt_${i + 1}`, version: i + 1 })))
      }),
      runs(1000),
    )
  }, 60_000)

  it("given an event type no schema knows, then it is an UndecodableEvent (unknown-type), not a crash", () => {
    const error = failure(SessionLog.decode(recorded("MysteryHappened", 1, { _tag: "MysteryHappened" }, 3)))
    expect(error).toMatchObject({
      _tag: "UndecodableEvent",
      reason: "unknown-type",
      streamVersion: 3,
      sessionId: "ses_x",
    })
    expect((error as Error).message).toBe(
      "session ses_x, event 3 (MysteryHappened): unknown event type MysteryHappened (written by a newer pivot or another program?)",
    )
  })

  it("given an event from a newer schema version, then it is an UndecodableEvent (newer-version)", () => {
    const error = failure(SessionLog.decode(recorded("SessionStarted", 2, Events.encode(started))))
    expect(error).toMatchObject({ _tag: "UndecodableEvent", reason: "newer-version" })
    expect((error as Error).message).toContain("schema version 2 is newer than this pivot reads (up to 1)")
  })

  it("given malformed data, then the error names the bad field's path", () => {
    const error = failure(SessionLog.decode(recorded("SessionStarted", 1, { _tag: "SessionStarted", at: "soon" })))
    expect(error).toMatchObject({ reason: "malformed" })
    expect((error as Error).message).toMatch(/malformed data at data\.(sessionId|at)/)
  })

  it("given data of another type than the stored type, then it is malformed", () => {
    const error = failure(SessionLog.decode(recorded("UserMessageAdded", 1, Events.encode(started))))
    expect(error).toMatchObject({ reason: "malformed" })
  })

  it("given foreign event types with their schemas, then they are validated and skipped; others still fail", () => {
    const Noted = Schema.Struct({ _tag: Schema.Literal("Noted"), text: Schema.String })
    const decoder = SessionLog.makeDecoder({ foreign: { Noted: { version: 1, schema: Noted } } })
    expect(decoder(recorded("Noted", 1, { _tag: "Noted", text: "hi" }))).toEqual(Result.succeed(undefined))
    expect(failure(decoder(recorded("Noted", 1, { _tag: "Noted", text: 3 })))).toMatchObject({ reason: "malformed" })
    expect(failure(decoder(recorded("Other", 1, {})))).toMatchObject({ reason: "unknown-type" })
    const all = SessionLog.decodeAll(
      [
        recorded("SessionStarted", 1, Events.encode(started), 1),
        recorded("Noted", 1, { _tag: "Noted", text: "hi" }, 2),
      ],
      decoder,
    )
    expect(Result.map(all, (log) => log.map((l) => l.meta.version))).toEqual(Result.succeed([1]))
  })

  it("given upcasters, then an older stored version is lifted before decoding; without one it is missing-upcaster", () => {
    // Core's events are all at v1, so the chain is shown on a foreign type at v2 whose v1 called `text` `body`.
    const Noted = { version: 2, schema: Schema.Struct({ _tag: Schema.Literal("Noted"), text: Schema.String }) }
    const old = recorded("Noted", 1, { _tag: "Noted", body: "hi" })
    const up = (data: unknown) => {
      const { body, ...rest } = data as { body: string }
      return { ...rest, text: body }
    }
    const lifting = SessionLog.makeDecoder({ foreign: { Noted }, upcasters: [{ type: "Noted", fromVersion: 1, up }] })
    expect(lifting(old)).toEqual(Result.succeed(undefined))
    const stuck = SessionLog.makeDecoder({ foreign: { Noted } })
    expect(failure(stuck(old))).toMatchObject({ reason: "missing-upcaster" })
  })

  it("eventId is deterministic, sortable by version, and a valid EventId", () => {
    const id = SessionLog.eventId("ses_04ca851f7ffevKrKMHW3RsPK1U", 42)
    expect(id).toBe("evt_04ca851f7ffevKrKMHW3RsPK1U_000042")
    expect(Schema.is(Ids.EventId)(id)).toBe(true)
    expect(SessionLog.eventId("ses_a", 9) < SessionLog.eventId("ses_a", 10)).toBe(true)
    expect(SessionLog.fromEvents("ses_a", [started]).map((l) => l.meta)).toEqual([{ id: "evt_a_000001", version: 1 }])
  })

  it("reading a session that has no stream answers no events; version is 0", async () => {
    const [log, version] = await Effect.runPromise(
      Effect.all([SessionLog.read("ses_none"), SessionLog.version("ses_none")]).pipe(
        Effect.provide(EventStore.layerMemory()),
      ),
    )
    expect(log).toEqual([])
    expect(version).toBe(0)
  })

  it("appendEvents takes fresh ids from the Ids service", async () => {
    const log = await Effect.runPromise(
      Effect.gen(function* () {
        yield* SessionLog.appendEvents("ses_x", "no-stream", [started])
        return yield* SessionLog.read("ses_x")
      }).pipe(Effect.provide(EventStore.layerMemory()), Effect.provide(Ids.Ids.layerSequential)),
    )
    expect(log).toEqual([{ event: started, meta: { id: "evt_00000001", version: 1 } }])
  })
})
