// A long session made quickly, for benchmarks that need up to a million events: the agent loop's shape (a request,
// a tool step with a ~600-character output, a closing step; a prune every 8 turns; a manual compaction every 30
// turns by default (`compactEvery`), so the window stays bounded) decided by core's Decider directly and appended in batches, without running
// the runtime for every event.
import { Conversation, Events, Ids, Session, Tokens } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import type { NewEvent, RecordedEvent } from "@pivot/store"
import { Effect, Result } from "effect"

const MODEL = { providerId: "bench", modelId: "bench" }
const LIMITS = { context: 24_000, output: 4_000 }

/**
 * Makes the events of one session on demand: `until(n)` answers the encoded events that take it to ≥ n events;
 * `adopt` folds events someone else appended. Its own state is kept bounded the way the runtime keeps it.
 */
export const bulkSession = (
  sessionId: string,
  options: {
    readonly observe?: ((event: Events.Event) => void) | undefined
    /** Turns between two compactions (default 30). */
    readonly compactEvery?: number | undefined
  } = {},
) => {
  const every = options.compactEvery ?? 30
  let state = Sessions.initialState
  let turn = 0
  let messages = 0
  // Time-ordered ids, as the runtime makes them, so that the session's ids ascend across both writers.
  const ids = Effect.runSync(
    Effect.gen(function* () {
      return yield* Ids.Ids
    }).pipe(Effect.provide(Ids.Ids.layer)),
  )
  const id = (prefix: "msg" | "prt" | "evt"): string =>
    prefix === "msg"
      ? Effect.runSync(ids.message)
      : prefix === "prt"
        ? Effect.runSync(ids.part)
        : Effect.runSync(ids.event)
  const out: Array<NewEvent> = []
  const apply = (command: Parameters<typeof Session.decide>[0]) => {
    const decided = Session.decide(command, state.session)
    if (Result.isFailure(decided)) throw new Error(`${command._tag}: ${decided.failure._tag}`)
    for (const event of decided.success) {
      state = Sessions.evolve(state, event)
      if (Conversation.addedMessage(event) !== undefined) messages++
      options.observe?.(event)
      out.push(Sessions.encodeEvent(id("evt"), event))
    }
    if (command._tag === "FinishSummary") state = Sessions.retain(state)
  }
  apply({ _tag: "StartSession", sessionId: Ids.unsafe.session(sessionId), at: 1, model: MODEL })
  const oneTurn = () => {
    const t = ++turn
    const at = t * 1_000
    const user = Ids.unsafe.message(id("msg"))
    apply({
      _tag: "AddUserMessage",
      message: {
        role: "user",
        id: user,
        createdAt: at,
        parts: [{ type: "text", id: Ids.unsafe.part(id("prt")), text: `request ${t}: fix src/module${t % 40}.ts` }],
      },
    })
    const tokens = { input: 5_000, output: 100, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
    apply({
      _tag: "RecordAssistantStep",
      message: {
        role: "assistant",
        id: Ids.unsafe.message(id("msg")),
        parentId: user,
        createdAt: at + 1,
        completedAt: at + 2,
        model: MODEL,
        tokens,
        finish: "tool-calls",
        parts: [
          {
            type: "tool",
            id: Ids.unsafe.part(id("prt")),
            callId: `call_${t}`,
            tool: "read",
            state: {
              status: "completed",
              input: { filePath: `src/module${t % 40}.ts` },
              output: `export const value${t} = ${t}\n`.repeat(20),
            },
          },
        ],
      },
      limits: LIMITS,
    })
    apply({
      _tag: "RecordAssistantStep",
      message: {
        role: "assistant",
        id: Ids.unsafe.message(id("msg")),
        parentId: user,
        createdAt: at + 3,
        completedAt: at + 4,
        model: MODEL,
        tokens,
        finish: "stop",
        parts: [{ type: "text", id: Ids.unsafe.part(id("prt")), text: `Fixed module ${t}.` }],
      },
      limits: LIMITS,
    })
    if (t % 8 === 0) apply({ _tag: "Prune", at: at + 5, protect: 2_000, minimum: 0 })
    if (t % every === 0) {
      const markerId = Ids.unsafe.message(id("msg"))
      apply({ _tag: "CreateCompaction", at: at + 6, markerId, partId: Ids.unsafe.part(id("prt")), auto: false })
      apply({
        _tag: "ProcessCompaction",
        at: at + 7,
        markerId,
        summaryId: Ids.unsafe.message(id("msg")),
        model: MODEL,
        compactionLimits: LIMITS,
        config: { tail_turns: 2 },
      })
      apply({
        _tag: "FinishSummary",
        at: at + 8,
        markerId,
        partId: Ids.unsafe.part(id("prt")),
        text: `Summary after turn ${t}: modules 0 to ${t % 40} fixed.`,
        tokens: { input: 3_000, output: 200, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      })
    }
  }
  return {
    /** The events that take the session to at least `size` events (those not handed out before). */
    until: (
      size: number,
      options: { readonly midCycle?: boolean; readonly afterPivot?: boolean; readonly messages?: boolean } = {},
    ): Array<NewEvent> => {
      // `midCycle`: stop halfway between two compactions, so that sessions of any size are compared at the same
      // point of their cycle (the window's size depends on it, not on the history); `afterPivot`: just after one.
      // `messages`: `size` counts stored messages instead of events.
      const phase = options.midCycle === true ? Math.floor(every / 2) : options.afterPivot === true ? 0 : undefined
      while (
        (options.messages === true ? messages : state.session.version) < size ||
        (phase !== undefined && turn % every !== phase)
      )
        oneTurn()
      return out.splice(0, out.length)
    },
    /** Messages stored so far (markers and summaries included). */
    get messages() {
      return messages
    },
    /** Folds events appended by another writer (they must follow this session's version). */
    adopt: (recorded: ReadonlyArray<RecordedEvent>) => {
      for (const r of recorded) {
        const decoded = Sessions.decodeEvent(sessionId, r)
        if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
        state = Sessions.evolve(state, decoded.success)
      }
      state = Sessions.retain(state)
    },
    /** The session's state now (bounded), for a snapshot. */
    get state() {
      return state
    },
    stream: Events.streamName(sessionId),
  }
}

/** The timed turns' tool step (bench:peers, acting-prune): step `s` of turn `i` reads a module, a 20-line output. */
export const readStep = (i: number, s: number) => ({
  parts: [
    { type: "text" as const, text: `Step ${s}: reading the file.` },
    {
      type: "tool" as const,
      callId: `call_${i}_${s}`,
      tool: "read",
      state: {
        status: "completed" as const,
        input: { filePath: `src/module${(i + s) % 40}.ts` },
        output: `export const value${i}_${s} = ${i}\n`.repeat(20),
      },
    },
  ],
  usage: { ...Tokens.zero, input: 1_000 },
  finish: "tool-calls" as const,
})
