/** The command handler over the store: cached loads, exact expected versions, bounded retries, typed decode errors. */
import { type Commands, Events, Ids, type Message, Session, Window } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, WrongExpectedVersion } from "@pivot/store"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"

const SESSION = "ses_s"
const stream = Events.streamName(SESSION)
const msg = Ids.unsafe.message
const prt = Ids.unsafe.part
const MODEL = { providerId: "p", modelId: "m" }

const start: Commands.Command = { _tag: "StartSession", sessionId: Ids.unsafe.session(SESSION), at: 0 }
const userMessage = (n: number, text = `u${n}`): Message.UserMessage => ({
  role: "user",
  id: msg(`msg_u${String(n).padStart(4, "0")}`),
  createdAt: n,
  parts: [{ type: "text", id: prt(`prt_u${String(n).padStart(4, "0")}`), text }],
})
const addUser = (n: number, text?: string): Commands.Command => ({
  _tag: "AddUserMessage",
  message: userMessage(n, text),
})
const step = (n: number, parent: number): Commands.Command => ({
  _tag: "RecordAssistantStep",
  message: {
    role: "assistant",
    id: msg(`msg_a${String(n).padStart(4, "0")}`),
    parentId: userMessage(parent).id,
    createdAt: n,
    model: MODEL,
    tokens: { input: n, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    finish: "stop",
    parts: [{ type: "text", id: prt(`prt_a${String(n).padStart(4, "0")}`), text: `a${n}` }],
  },
})

/** Counts events the store hands back to reads. */
const counting = (counter: { read: number; appends: number }, base = EventStore.layerMemory()) =>
  Layer.effect(
    EventStore,
    Effect.gen(function* () {
      const inner = yield* EventStore
      return {
        ...inner,
        read: (s, o) =>
          inner.read(s, o).pipe(Effect.tap((events) => Effect.sync(() => (counter.read += events.length)))),
        append: (s, v, e) => inner.append(s, v, e).pipe(Effect.tap(() => Effect.sync(() => counter.appends++))),
      }
    }),
  ).pipe(Layer.provide(base))

const handler = (options?: Sessions.Options) =>
  Sessions.Sessions.layer(options).pipe(Layer.provide(Ids.Ids.layerSequential))

const runWith = <A, E>(
  program: Effect.Effect<A, E, Sessions.Sessions | EventStore>,
  store: Layer.Layer<EventStore> = EventStore.layerMemory(),
  options?: Sessions.Options,
) =>
  Effect.runPromise(program.pipe(Effect.provide(handler(options).pipe(Layer.provideMerge(store)))) as Effect.Effect<A>)

describe("execute", () => {
  it("given a new session, when commands run, then events are appended with their type, schema version and an id from the Ids service", async () => {
    const recorded = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        yield* sessions.execute(SESSION, addUser(1))
        return yield* (yield* EventStore).read(stream)
      }),
    )
    expect(recorded.map((r) => [r.type, r.version, r.streamVersion])).toEqual([
      ["SessionStarted", Events.versions.SessionStarted, 1],
      ["UserMessageAdded", Events.versions.UserMessageAdded, 2],
    ])
    expect(recorded.every((r) => /^evt_\d+$/.test(r.id))).toBe(true)
  })

  it("given a cached session, when many commands run, then the store is never re-read (per-command cost does not grow with history)", async () => {
    const counter = { read: 0, appends: 0 }
    const out = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        for (let n = 1; n <= 200; n++) yield* sessions.execute(SESSION, addUser(n))
        const beforeLoad = counter.read
        const state = yield* sessions.load(SESSION)
        return { beforeLoad, afterLoad: counter.read, version: state.session.version }
      }),
      counting(counter),
    )
    expect(out.version).toBe(201)
    expect(out.beforeLoad).toBe(0)
    expect(out.afterLoad).toBe(0)
    expect(counter.appends).toBe(201)
  })

  it("given a decision that is a no-op, when executed twice, then the second run appends nothing (idempotent)", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        const first = yield* sessions.execute(SESSION, addUser(1))
        const second = yield* sessions.execute(SESSION, addUser(1))
        return { first: first.events.length, second: second.events.length, version: second.state.session.version }
      }),
    )
    expect(out).toEqual({ first: 1, second: 0, version: 2 })
  })

  it("given a command before the session started, then SessionNotStarted and nothing is appended", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        const error = yield* Effect.flip(sessions.execute(SESSION, addUser(1)))
        return { tag: error._tag, version: yield* (yield* EventStore).streamVersion(stream) }
      }),
    )
    expect(out).toEqual({ tag: "SessionNotStarted", version: 0 })
  })

  it("given a batch whose second command is refused, then the whole batch is refused and nothing is appended", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        const error = yield* Effect.flip(
          sessions.execute(SESSION, [
            addUser(1),
            {
              _tag: "RecordToolResult",
              at: 1,
              messageId: msg("msg_nope"),
              partId: prt("prt_nope"),
              state: { status: "error", input: {}, error: "x" },
            },
          ]),
        )
        return { tag: error._tag, version: (yield* sessions.load(SESSION)).session.version }
      }),
    )
    expect(out).toEqual({ tag: "UnknownMessage", version: 1 })
  })

  it("given two handlers on one store, when the stale one executes, then it re-reads after WrongExpectedVersion and appends after the other's events", async () => {
    let bEvents = 0
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        const a = yield* Sessions.make().pipe(
          Effect.provideService(EventStore, store),
          Effect.provide(Ids.Ids.layerSequential),
        )
        const b = yield* Sessions.make().pipe(
          Effect.provideService(EventStore, store),
          Effect.provide(
            Layer.effect(
              Ids.Ids,
              Effect.succeed({
                session: Effect.succeed(Ids.unsafe.session("ses_b")),
                message: Effect.succeed(msg("msg_b")),
                part: Effect.succeed(prt("prt_b")),
                event: Effect.sync(() => Ids.unsafe.event(`evt_b${++bEvents}`)),
              }),
            ),
          ),
        )
        yield* a.execute(SESSION, start)
        yield* b.load(SESSION) // b caches version 1
        yield* a.execute(SESSION, addUser(1))
        const executed = yield* b.execute(SESSION, addUser(2)) // stale: expects 1, store is at 2
        const events = yield* store.read(stream)
        return { version: executed.state.session.version, types: events.map((e) => e.type) }
      }).pipe(Effect.scoped, Effect.provide(EventStore.layerMemory())),
    )
    expect(out.version).toBe(3)
    expect(out.types).toEqual(["SessionStarted", "UserMessageAdded", "UserMessageAdded"])
  })

  it("given a store that always reports a conflict, when executing, then ConcurrencyConflict after the configured attempts", async () => {
    const conflicting = Layer.effect(
      EventStore,
      Effect.gen(function* () {
        const inner = yield* EventStore
        return {
          ...inner,
          append: (s: string) => Effect.fail(new WrongExpectedVersion({ stream: s, expected: 0, actual: 1 })),
        }
      }),
    ).pipe(Layer.provide(EventStore.layerMemory()))
    const error = await runWith(
      Effect.flip(
        Effect.gen(function* () {
          return yield* (yield* Sessions.Sessions).execute(SESSION, start)
        }),
      ),
      conflicting,
      { maxAttempts: 3 },
    )
    expect(error).toMatchObject({ _tag: "ConcurrencyConflict", attempts: 3 })
  })
})

describe("reading events", () => {
  const raw = (type: string, version: number, data: unknown) => ({ id: `evt_${type}_${version}`, type, version, data })

  const decodeFailure = (event: ReturnType<typeof raw>) =>
    runWith(
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* store.append(stream, 0, [
          {
            id: "evt_start",
            type: "SessionStarted",
            version: 1,
            data: Events.encode({ _tag: "SessionStarted", sessionId: Ids.unsafe.session(SESSION), at: 0 }),
          },
          event,
        ])
        const sessions = yield* Sessions.Sessions
        return yield* Effect.flip(sessions.load(SESSION))
      }),
    )

  it("given an event of an unknown type, then UndecodableEvent unknown-type", async () => {
    expect(await decodeFailure(raw("Teleported", 1, {}))).toMatchObject({
      _tag: "UndecodableEvent",
      reason: "unknown-type",
      streamVersion: 2,
    })
  })

  it("given an event from a newer schema version, then UndecodableEvent newer-version", async () => {
    expect(await decodeFailure(raw("UserMessageAdded", 99, {}))).toMatchObject({ reason: "newer-version" })
  })

  it("given malformed data, then UndecodableEvent malformed naming the event", async () => {
    const error = await decodeFailure(raw("UserMessageAdded", 1, { _tag: "UserMessageAdded", at: "noon" }))
    expect(error).toMatchObject({ reason: "malformed", type: "UserMessageAdded" })
  })

  it("given a runtime event, then it decodes alongside core's", async () => {
    const events = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        yield* sessions.execute(SESSION, {
          _tag: "Record",
          events: [{ _tag: "PluginFailed", at: 1, plugin: "p", hook: "redact", reason: "threw", message: "x" }],
        })
        return yield* sessions.events(SESSION)
      }),
    )
    expect(events.map((e) => e._tag)).toEqual(["SessionStarted", "PluginFailed"])
  })

  it("given events, when read up to a version, then only that prefix comes back", async () => {
    const events = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, [start, addUser(1), addUser(2)])
        return yield* sessions.events(SESSION, { to: 2 })
      }),
    )
    expect(events.map((e) => e._tag)).toEqual(["SessionStarted", "UserMessageAdded"])
  })
})

describe("properties", () => {
  type Op =
    | { readonly kind: "user" }
    | { readonly kind: "step" }
    | { readonly kind: "repeat" }
    | { readonly kind: "record" }
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.constant({ kind: "user" } as const),
    fc.constant({ kind: "step" } as const),
    fc.constant({ kind: "repeat" } as const),
    fc.constant({ kind: "record" } as const),
  )

  it("invariant: the cached state equals the fold of the stored events (cache == rebuild), for any command sequence", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 12 }), async (ops) => {
        const out = await runWith(
          Effect.gen(function* () {
            const sessions = yield* Sessions.Sessions
            yield* sessions.execute(SESSION, start)
            let users = 0
            let steps = 0
            for (const o of ops) {
              if (o.kind === "user") yield* sessions.execute(SESSION, addUser(++users))
              else if (o.kind === "step" && users > 0) yield* sessions.execute(SESSION, step(++steps, users))
              else if (o.kind === "repeat" && users > 0) yield* sessions.execute(SESSION, addUser(users))
              else if (o.kind === "record")
                yield* sessions.execute(SESSION, {
                  _tag: "Record",
                  events: [{ _tag: "PluginFailed", at: 1, plugin: "p", hook: "redact", reason: "threw", message: "x" }],
                })
            }
            const cached = yield* sessions.load(SESSION)
            const rebuilt = Sessions.fold(yield* sessions.events(SESSION))
            return { cached, rebuilt }
          }),
        )
        expect(out.cached.session.version).toBe(out.rebuilt.session.version)
        expect(Window.messages(out.cached.session.window)).toEqual(Window.messages(out.rebuilt.session.window))
        expect(out.cached.runtime).toEqual(out.rebuilt.runtime)
        expect(out.cached.session.lastFinished).toBe(out.rebuilt.session.lastFinished)
        expect(Session.fold([]).version).toBe(0)
      }),
      runs(1000),
    )
  }, 60_000)
})

describe("record-time redaction (redactOnRecord)", () => {
  const KEY = ["sk-", "proj-", "Q7fz0xK2mW9bL4tR8vN1cY6hJ3pD5sA0eG2iU7"].join("")
  const withSecret = addUser(1, `my key is ${KEY}`)

  it("given redactOnRecord, when a message with a key is added twice, then the key is redacted once, noted once, and the repeat appends nothing", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        const first = yield* sessions.execute(SESSION, withSecret)
        const second = yield* sessions.execute(SESSION, withSecret)
        return { first: first.events, second: second.events, stored: JSON.stringify(yield* sessions.events(SESSION)) }
      }),
      EventStore.layerMemory(),
      { redactOnRecord: true },
    )
    expect(out.first.map((e) => e._tag)).toEqual(["UserMessageAdded", "SecretsRedactedOnRecord"])
    expect(out.first[1]).toMatchObject({
      command: "AddUserMessage",
      findings: [{ messageId: "msg_u0001", partId: "prt_u0001", field: "text", kind: "openai-key" }],
    })
    expect(out.second).toEqual([])
    expect(out.stored).not.toContain(KEY)
    expect(out.stored).toContain("my key is [REDACTED:openai-key]")
  })

  it("given redactOnRecord off (the default), then the text is stored as given and nothing is noted", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        return (yield* sessions.execute(SESSION, withSecret)).events
      }),
    )
    expect(out.map((e) => e._tag)).toEqual(["UserMessageAdded"])
    expect(JSON.stringify(out)).toContain(KEY)
  })

  it("given a runtime event carrying a secret, when recorded with redactOnRecord, then its strings are redacted too", () => {
    const decided = Sessions.decide(
      Sessions.initialState,
      {
        _tag: "Record",
        events: [{ _tag: "PluginFailed", at: 1, plugin: "p", hook: "redact", reason: "threw", message: `bad ${KEY}` }],
      },
      7,
    )
    expect(decided._tag).toBe("Success")
    const events = decided._tag === "Success" ? decided.success.events : []
    expect(events).toEqual([
      {
        _tag: "PluginFailed",
        at: 1,
        plugin: "p",
        hook: "redact",
        reason: "threw",
        message: "bad [REDACTED:openai-key]",
      },
      {
        _tag: "SecretsRedactedOnRecord",
        at: 7,
        command: "Record",
        findings: [{ field: "events[0].message", kind: "openai-key" }],
      },
    ])
  })
})
