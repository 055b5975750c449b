/** A runtime over a memory (or SQLite) store with deterministic ids and a scripted summariser, for given/when/then tests. */
import { type Events, Ids, type Message, Session, Tokens, Window } from "@pivot/core"
import {
  ContextManager,
  type Options,
  type Prepared,
  Sessions,
  Summarizer,
  SummarizerError,
  type SummarizerShape,
  type SummaryRequest,
  type SummaryResponse,
} from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"

export const SESSION = "ses_test"
export const MODEL = { providerId: "anthropic", modelId: "claude-test" } as const
/** The spec's fixture model: context 100k, output 32k, no input limit (usable 68k, tail budget 8k). */
export const LIMITS = { context: 100_000, output: 32_000 } as const
export const SPEC = { ref: MODEL, limits: LIMITS }

/** A scripted summariser that records every request it gets. */
export interface Stub {
  readonly summarizer: SummarizerShape
  readonly requests: Array<SummaryRequest>
}

/** A summariser answering `reply` (a text, or an effect per request) and recording the requests. */
export const stub = (
  reply: string | ((request: SummaryRequest, n: number) => Effect.Effect<SummaryResponse, SummarizerError>) = "summary",
): Stub => {
  const requests: Array<SummaryRequest> = []
  const summarizer: SummarizerShape = {
    summarize: (request) =>
      Effect.suspend(() => {
        requests.push(request)
        if (typeof reply === "string")
          return Effect.succeed({
            text: reply,
            usage: { ...Tokens.zero, input: 10, output: 2 },
            finish: "stop",
            model: request.model,
          })
        return reply(request, requests.length)
      }),
  }
  return { summarizer, requests }
}

/** A summariser failing with `reason`. */
export const failing = (reason: SummarizerError["reason"], message = "boom"): Stub =>
  stub(() => Effect.fail(new SummarizerError({ reason, message })))

/** Everything a test needs to build a runtime. */
export interface Setup {
  readonly options?: Partial<Options>
  /** The model summariser; `null` for none (extractive default). */
  readonly summarizer?: Stub | null
  readonly store?: Layer.Layer<EventStore, unknown>
  /** The id service; sequential ids by default (a second runtime on the same store needs `Ids.Ids.layer`). */
  readonly ids?: Layer.Layer<Ids.Ids>
}

/** The runtime layer of a setup. */
export const layer = (setup: Setup = {}) => {
  const summarizer = setup.summarizer === undefined ? stub() : setup.summarizer
  const base = ContextManager.layer({ model: SPEC, ...setup.options })
  const withSummarizer =
    summarizer === null ? base : base.pipe(Layer.provide(Layer.succeed(Summarizer, summarizer.summarizer)))
  return withSummarizer.pipe(
    Layer.provide(setup.ids ?? Ids.Ids.layerSequential),
    Layer.provideMerge(setup.store ?? EventStore.layerMemory()),
  )
}

/** Runs a program against a fresh runtime. */
export const run = <A, E>(
  program: Effect.Effect<A, E, ContextManager | Sessions.Sessions | EventStore>,
  setup: Setup = {},
): Promise<A> => Effect.runPromise(program.pipe(Effect.provide(layer(setup))) as Effect.Effect<A, never>)

/** The context manager and the sessions handler. */
export const services = Effect.all({ cm: ContextManager, sessions: Sessions.Sessions })

/** Records a user message (in `SESSION` unless another session is named). */
export const user = (text: string, sessionId: string = SESSION) =>
  Effect.gen(function* () {
    const { cm } = yield* services
    return yield* cm.recordUserMessage(sessionId, { text })
  })

/** The model input of `SESSION`'s next call. */
export const prepare = Effect.gen(function* () {
  const { cm } = yield* services
  return yield* cm.prepare(SESSION)
})

/** The session's window messages (model order). */
export const windowOf = (state: Sessions.State): ReadonlyArray<Message.Message> => Window.messages(state.session.window)

/** The last message of the window. */
export const lastOf = (state: Sessions.State): Message.Message | undefined => windowOf(state).at(-1)

/** Text of every text part of a message. */
export const textOf = (message: Message.Message | undefined): string =>
  message === undefined ? "" : message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")

/** The JSON the summariser saw (its messages). */
export const captured = (request: SummaryRequest | undefined): string => JSON.stringify(request?.messages ?? [])

/** Usage of `n` input tokens. */
export const used = (input: number, output = 0): Tokens.TokenUsage => ({ ...Tokens.zero, input, output })

/** A completed tool part input (id filled by the runtime). */
export const tool = (name: string, input: Record<string, unknown>, output: string) => ({
  type: "tool" as const,
  callId: `call_${name}_${Math.abs(hash(JSON.stringify(input)))}`,
  tool: name,
  state: { status: "completed" as const, input, output, title: name },
})

/**
 * A request, then a tool step whose usage reports 80,000 input tokens (mid-task: its finish is `tool-calls`), then
 * `prepare`: what it prepared and the session's events.
 */
export const midTaskOverflow: Effect.Effect<
  { readonly prepared: Prepared; readonly events: ReadonlyArray<Events.Event> },
  unknown,
  ContextManager | Sessions.Sessions
> = Effect.gen(function* () {
  const { cm, sessions } = yield* services
  yield* cm.recordUserMessage(SESSION, { text: "go" })
  yield* cm.recordAssistantStep(SESSION, {
    parts: [tool("bash", { command: "make" }, "ok")],
    usage: used(80_000),
    finish: "tool-calls",
  })
  const prepared = yield* cm.prepare(SESSION)
  return { prepared, events: yield* sessions.events(SESSION) }
})

const hash = (s: string): number => {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0
  return h
}

/** The compaction record of the marker, from the session state. */
export const compactionOf = (state: Sessions.State, markerId: string) =>
  Session.compaction(state.session, markerId as Ids.MessageId)

/** Records user messages in order; answers their ids. */
export const users = (...texts: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { cm } = yield* services
    const ids: Array<Ids.MessageId> = []
    for (const text of texts) ids.push((yield* cm.recordUserMessage(SESSION, { text })).messageId!)
    return ids
  })

/** Records one step: some text and a bash call running `command`, using `input` tokens. */
export const step = (input: number, finish = "tool-calls", command = `step ${input}`) =>
  Effect.gen(function* () {
    const { cm } = yield* services
    return yield* cm.recordAssistantStep(SESSION, {
      parts: [{ type: "text", text: "working" }, tool("bash", { command }, "ok")],
      usage: used(input),
      finish,
    })
  })
