/**
 * Issue 18 item 5, shared by the memory / SQLite property and the PostgreSQL one: commands retried with the same ids
 * through `ContextManager` (which stamps the current time), after lost acknowledgements and restarts, interleaved with
 * other commands, checked against an independent model of what must be acknowledged, refused and stored.
 */
import { Events, Ids } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore, type EventStoreShape, StoreUnavailable } from "@pivot/store"
import { Context, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { SPEC, used } from "./harness.ts"

const K = 5

/** One call: a user message `u<k>` or the step `a<k>` answering it, in one of two contents. */
export interface Action {
  readonly kind: "user" | "step"
  readonly k: number
  /** 0: the content every other call with this id has too; 1: other content under the same id. */
  readonly variant: 0 | 1
  /** Milliseconds the clock moves before the call (the runtime stamps the time of the call). */
  readonly advance: number
  /** The store commits the call's append, then the caller sees a failure; the caller retries the same call. */
  readonly lostAck: boolean
  /** A new runtime (an empty cache) over the same store before the call. */
  readonly restart: boolean
}

export const action: fc.Arbitrary<Action> = fc.record({
  kind: fc.constantFrom("user" as const, "step" as const),
  k: fc.integer({ min: 0, max: K - 1 }),
  variant: fc.constantFrom(0 as const, 0 as const, 0 as const, 1 as const),
  advance: fc.integer({ min: 0, max: 5_000 }),
  lostAck: fc.boolean(),
  restart: fc.boolean(),
})

/** Each call repeated: the sequence interleaves retries of the same command with the others. */
export const actions = fc.array(action, { minLength: 1, maxLength: 24 })

const idOf = (a: Pick<Action, "kind" | "k">) => Ids.unsafe.message(`msg_${a.kind === "user" ? "u" : "a"}${a.k}`)
const partOf = (a: Pick<Action, "kind" | "k">) => Ids.unsafe.part(`prt_${a.kind === "user" ? "u" : "a"}${a.k}`)

/** What the model says of a call: acknowledged (stored now or before) or refused with a tag. */
type Expected = "stored" | "acknowledged" | "MessageConflict" | "UnknownMessage"

/** The reference: a map from id to the content first stored under it; knows nothing of the runtime. */
const reference = () => {
  const stored = new Map<string, number>()
  const order: Array<string> = []
  return {
    order,
    expect: (a: Action): Expected => {
      const id = idOf(a)
      if (a.kind === "step" && !stored.has(idOf({ kind: "user", k: a.k }))) return "UnknownMessage"
      const first = stored.get(id)
      if (first === undefined) {
        stored.set(id, a.variant)
        order.push(id)
        return "stored"
      }
      return first === a.variant ? "acknowledged" : "MessageConflict"
    },
  }
}

/** The reason of the injected failure: any other `StoreUnavailable` is the store's own, and fails the run. */
const LOST = "connection lost before the acknowledgement"

/** A store whose next append, when armed, commits and then fails as a lost acknowledgement would. */
const losing = (inner: EventStoreShape, armed: { value: boolean }): EventStoreShape => ({
  ...inner,
  append: (stream, expected, events) =>
    Effect.flatMap(inner.append(stream, expected, events), (result) => {
      if (!armed.value || events.length === 0) return Effect.succeed(result)
      armed.value = false
      return Effect.fail(new StoreUnavailable({ reason: LOST }))
    }),
})

/**
 * Odd `k`s are recorded without part ids (`{ id, text }` for a user message, an id-less text part for a step), as a
 * caller using the shorthand retries them (issue 32 defect 5); even ones name every part.
 */
const shorthand = (a: Pick<Action, "k">) => a.k % 2 === 1

const call = (cm: ContextManager["Service"], SESSION: string, a: Action) => {
  const text = `${a.kind === "user" ? "request" : "answer"} ${a.k}${a.variant === 1 ? " (edited)" : ""}`
  const part = shorthand(a) ? { type: "text" as const, text } : { type: "text" as const, id: partOf(a), text }
  return a.kind === "user"
    ? cm.recordUserMessage(SESSION, {
        id: idOf(a),
        agent: "build", // after a restart the stored message is decoded with its keys in another order
        ...(shorthand(a) ? { text } : { parts: [part] }),
      })
    : cm.recordAssistantStep(SESSION, {
        id: idOf(a),
        parentId: idOf({ kind: "user", k: a.k }),
        parts: [part],
        usage: used(100 + a.k),
        finish: "stop",
      })
}

/** A few milliseconds of real time: a store's I/O (PostgreSQL's round trips) goes on while the test clock stands. */
const ioTurn = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

/**
 * Runs `effect` on the test clock, moving it on while the effect waits (a conflict's backoff sleeps on it). Between two
 * moves the store's real I/O gets a turn: moving the clock in a tight loop ran the test clock past the runtime's
 * 2-minute conflict budget while PostgreSQL was still answering, and a retried conflict reached the caller (the flaky
 * `Idempotence.pg.slow.test.ts`, 2 of 3 runs on 0860426).
 */
const settled = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(Effect.result(effect))
    while (fiber.pollUnsafe() === undefined) {
      yield* ioTurn
      if (fiber.pollUnsafe() === undefined) yield* TestClock.adjust("1 second")
    }
    return yield* Fiber.join(fiber)
  })

/**
 * Runs `sequence` on session `SESSION` of the store built by `store` (a fresh one per run) and checks every outcome and the stored stream
 * against the reference. Time is the test clock's.
 */
export const check = (sequence: ReadonlyArray<Action>, store: Layer.Layer<EventStore, unknown>, SESSION = "ses_idem") =>
  Effect.gen(function* () {
    const inner = Context.get(yield* Layer.build(store), EventStore)
    const armed = { value: false }
    const shared = Layer.succeed(EventStore, losing(inner, armed))
    // One id service for every runtime of the run: event ids are never repeated, as across real restarts.
    const ids = Layer.succeedContext(yield* Layer.build(Ids.Ids.layer))
    const runtime = () =>
      Effect.map(
        Layer.build(ContextManager.layer({ model: SPEC }).pipe(Layer.provide(ids), Layer.provide(shared))),
        (context) => Context.get(context, ContextManager),
      )
    let cm = yield* runtime()
    yield* cm.start(SESSION)
    const model = reference()
    for (const a of sequence) {
      if (a.restart) cm = yield* runtime()
      yield* TestClock.adjust(a.advance)
      const expected = model.expect(a)
      armed.value = a.lostAck
      let outcome = yield* settled(call(cm, SESSION, a))
      armed.value = false
      if (outcome._tag === "Failure" && outcome.failure._tag === "StoreUnavailable") {
        if (outcome.failure.reason !== LOST) return yield* Effect.die(`the store failed: ${outcome.failure.reason}`)
        // Lost: stored, not acknowledged. The caller retries the very call later (the runtime stamps a later time).
        if (expected !== "stored") return yield* Effect.die(`a lost acknowledgement on a call that stores nothing`)
        yield* TestClock.adjust(1_000)
        outcome = yield* settled(call(cm, SESSION, a))
      }
      const got = outcome._tag === "Success" ? "ok" : outcome.failure._tag
      const want = expected === "stored" || expected === "acknowledged" ? "ok" : expected
      if (got !== want) return yield* Effect.die(`${a.kind} ${a.k} v${a.variant}: expected ${want}, got ${got}`)
    }
    const recorded = yield* inner.read(Events.streamName(SESSION))
    const messages = recorded.flatMap((e) =>
      e.type === "UserMessageAdded" || e.type === "AssistantStepRecorded"
        ? [String((e.data as { message: { id: string } }).message.id)]
        : [],
    )
    return { stored: messages, expected: model.order }
  }).pipe(Effect.scoped)
