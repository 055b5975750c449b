/**
 * pivot inside an AI SDK agent, with no glue code: hooks to spread into `generateText`, `streamText` or the
 * `ToolLoopAgent` settings. Before every step `prepareStep` swaps the messages for the session's window
 * (`ContextManager.prepare`: pending compactions settled, the overflow pre-check run); after every step `onStepEnd`
 * records the step, its tool results and its usage; failed calls are reported (`onStepError`, `onError`) so an
 * overflow turns into a compaction, and `run` calls again once it is done.
 *
 * **Example**
 * ```ts
 * const pivot = yield* AiAgent.make({ sessionId: "ses_demo" })
 * const result = yield* Effect.promise(async () => {
 *   const input = await pivot.user("Fix the failing test") // once: `run` may call again after a compaction
 *   return pivot.run(() => generateText({ model, tools, stopWhen: stepCountIs(20), ...pivot.settings, ...input }))
 * })
 * ```
 */
import type { Message, Model } from "@pivot/core"
import {
  ContextManager,
  type ContextManagerShape,
  type PartInput,
  type Prepared,
  type ProviderErrorOutcome,
  type Recorded,
  type UserMessageInput,
} from "@pivot/runtime"
import type { ModelMessage, ProviderMetadata } from "ai"
import { Effect } from "effect"
import * as Messages from "./Messages.ts"

/** Options of the agent hooks. */
export interface Options {
  /** The pivot session (`ses_…`) the agent's turns are recorded in. */
  readonly sessionId: string
  /** The model recorded on each step; by default the one the AI SDK reports for the step. */
  readonly model?: Model.ModelRef | undefined
  /** The agent name recorded on user messages and steps. */
  readonly agent?: string | undefined
  /** Prune old tool outputs when a call ends (`onEnd`), as OpenCode does after its loop; default true. */
  readonly prune?: boolean | undefined
  /** Called with every prepared window, e.g. to draw a usage bar. */
  readonly onPrepared?: ((prepared: Prepared) => void) | undefined
  /** Called with what recording each step did (e.g. an overflow found and a compaction requested). */
  readonly onRecorded?: ((recorded: Recorded) => void) | undefined
}

/** Runs the context manager's effects: a `ManagedRuntime` that provides `ContextManager`, or `make`'s own runner. */
export interface Runner {
  readonly runPromise: <A, E>(effect: Effect.Effect<A, E, ContextManager>) => Promise<A>
}

/** What the hooks read from an AI SDK step result (`StepResult`, the `onStepEnd` event). */
export interface StepLike {
  readonly content: ReadonlyArray<{ readonly type: string }>
  readonly finishReason: string
  readonly usage: Messages.UsageLike
  readonly providerMetadata?: ProviderMetadata | undefined
  readonly model?: { readonly provider: string; readonly modelId: string } | undefined
}

/**
 * The settings to spread into `generateText`, `streamText` or `new ToolLoopAgent({ … })`. A spread replaces hooks of
 * the same name you set yourself; `Pivot.session(…).wrap(settings)` composes them instead.
 */
export interface Settings {
  readonly prepareStep: () => Promise<{ messages: Array<ModelMessage> }>
  readonly onStepEnd: (step: StepLike) => Promise<void>
  readonly onStepError: (event: { readonly error: unknown }) => Promise<void>
  /** `streamText` only (other calls ignore it): stream errors arrive here. */
  readonly onError: (event: { readonly error: unknown }) => Promise<void>
  readonly onEnd: () => Promise<void>
}

/** A tool's outcome recorded after its step: its output, or its error. */
export type ToolOutcome = { readonly output: unknown } | { readonly error: unknown }

/** The hooks of one session. */
export interface Hooks {
  readonly sessionId: string
  /** Spread into the AI SDK call or agent settings. */
  readonly settings: Settings
  /**
   * Records the user's message; spread the result into the call (`prompt` is only there to satisfy the SDK:
   * `prepareStep` sends the recorded window instead).
   */
  readonly user: (input: string | UserMessageInput) => Promise<{ prompt: string }>
  /**
   * Calls `call`, and calls it again (at most `maxAttempts` times, default 3) while a provider error reported during
   * the attempt asked for a compaction; the next attempt's `prepareStep` runs that compaction first.
   */
  readonly run: <A>(call: () => PromiseLike<A>, options?: { readonly maxAttempts?: number | undefined }) => Promise<A>
  /** Records the result of a tool call that had none when its step ended (a client-side tool, an approval). */
  readonly recordToolResult: (toolCallId: string, outcome: ToolOutcome) => Promise<Recorded | undefined>
  /** The last provider error reported (since the start of the last `run`), with what pivot made of it. */
  readonly lastError: () => ProviderErrorOutcome | undefined
  /** The last window prepared. */
  readonly lastPrepared: () => Prepared | undefined
}

// The content parts the hooks read, narrowed from `{ type }` by their tag.
interface TextContent {
  readonly type: "text" | "reasoning"
  readonly text: string
}
interface ToolCallContent {
  readonly type: "tool-call"
  readonly toolCallId: string
  readonly toolName: string
  readonly input: unknown
  readonly providerExecuted?: boolean | undefined
}
interface ToolResultContent {
  readonly type: "tool-result"
  readonly toolCallId: string
  readonly output: unknown
}
interface ToolErrorContent {
  readonly type: "tool-error"
  readonly toolCallId: string
  readonly error: unknown
}

type AssistantPartInput = PartInput<Message.AssistantPart>

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A tool input as pivot stores it: an object (anything else is wrapped as `{ value }`). */
export const toolInput = (input: unknown): Record<string, unknown> =>
  isRecord(input) ? input : input === undefined ? {} : { value: input }

/** A tool output as pivot stores it: text as is, anything else as JSON. */
export const toolOutput = (output: unknown): string => {
  if (typeof output === "string") return output
  const json = JSON.stringify(output)
  return json === undefined ? String(output) : json
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * An AI SDK step as pivot assistant parts, in the step's order: a step start, text, reasoning, each tool call with
 * its result (completed), its error, or nothing yet (pending), then a step finish with the step's usage. Sources and
 * generated files are not part of the model input and are left out.
 */
export const stepParts = (step: StepLike): ReadonlyArray<AssistantPartInput> => {
  const outcomes = new Map<string, ToolResultContent | ToolErrorContent>()
  for (const part of step.content)
    if (part.type === "tool-result" || part.type === "tool-error") {
      const outcome = part as ToolResultContent | ToolErrorContent
      outcomes.set(outcome.toolCallId, outcome)
    }
  const parts: Array<AssistantPartInput> = [{ type: "step-start" }]
  for (const part of step.content) {
    switch (part.type) {
      case "text":
      case "reasoning": {
        const { type, text } = part as TextContent
        if (text !== "") parts.push({ type, text })
        break
      }
      case "tool-call": {
        const call = part as ToolCallContent
        const input = toolInput(call.input)
        const outcome = outcomes.get(call.toolCallId)
        const state: Message.ToolState =
          outcome === undefined
            ? { status: "pending", input }
            : outcome.type === "tool-result"
              ? { status: "completed", input, output: toolOutput(outcome.output) }
              : { status: "error", input, error: errorText(outcome.error) }
        parts.push({
          type: "tool",
          callId: call.toolCallId,
          tool: call.toolName,
          state,
          ...(call.providerExecuted === true ? { providerExecuted: true } : {}),
        })
        break
      }
    }
  }
  parts.push({ type: "step-finish", reason: step.finishReason, tokens: Messages.stepTokenUsage(step) })
  return parts
}

/** The model ref of an AI SDK step's model (provider before the first `.`). */
export const stepModel = (step: StepLike): Model.ModelRef | undefined =>
  step.model === undefined
    ? undefined
    : { providerId: step.model.provider.split(".")[0] ?? step.model.provider, modelId: step.model.modelId }

/** Hooks that run the context manager through `runner` (e.g. a `ManagedRuntime` built from pivot's layers). */
export const fromRuntime = (runner: Runner, options: Options): Hooks => {
  const { sessionId } = options
  const cm = <A, E>(use: (manager: ContextManagerShape) => Effect.Effect<A, E>): Promise<A> =>
    runner.runPromise(
      Effect.gen(function* () {
        return yield* use(yield* ContextManager)
      }),
    )
  const pendingCalls = new Map<
    string,
    { readonly messageId: Message.AssistantMessage["id"]; readonly part: Message.ToolPart }
  >()
  const reported = new WeakSet<object>()
  let streamError: { readonly error: unknown } | undefined
  let lastError: ProviderErrorOutcome | undefined
  let lastPrepared: Prepared | undefined
  let reportedThisAttempt = false

  const modelOf = (step?: StepLike) => options.model ?? (step === undefined ? undefined : stepModel(step))

  const report = async (error: unknown, parts?: ReadonlyArray<AssistantPartInput>, step?: StepLike) => {
    if (isRecord(error) || error instanceof Error) {
      if (reported.has(error)) return
      reported.add(error)
    }
    const model = modelOf(step)
    lastError = await cm((manager) =>
      manager.reportProviderError(sessionId, {
        error: Messages.toProviderFailure(error) ?? error,
        ...(model === undefined ? {} : { model }),
        ...(options.agent === undefined ? {} : { agent: options.agent }),
        ...(parts === undefined ? {} : { parts }),
      }),
    )
    reportedThisAttempt = true
  }

  const flushStreamError = async () => {
    const pending = streamError
    streamError = undefined
    if (pending !== undefined) await report(pending.error)
  }

  const remember = (recorded: Recorded) => {
    for (const event of recorded.events)
      if (event._tag === "AssistantStepRecorded")
        for (const part of event.message.parts)
          if (part.type === "tool" && part.state.status === "pending" && part.providerExecuted !== true)
            pendingCalls.set(part.callId, { messageId: event.message.id, part })
  }

  const settings: Settings = {
    prepareStep: async () => {
      const prepared = await cm((manager) => manager.prepare(sessionId))
      lastPrepared = prepared
      options.onPrepared?.(prepared)
      return { messages: Messages.toModelMessages(prepared.messages) }
    },
    onStepEnd: async (step) => {
      const parts = stepParts(step)
      if (step.finishReason === "error" && streamError !== undefined) {
        // A stream that failed midway: the error is reported with the output produced before it.
        const { error } = streamError
        streamError = undefined
        await report(error, parts, step)
        return
      }
      const model = modelOf(step)
      const recorded = await cm((manager) =>
        manager.recordAssistantStep(sessionId, {
          parts,
          usage: Messages.stepTokenUsage(step),
          finish: step.finishReason,
          ...(model === undefined ? {} : { model }),
          ...(options.agent === undefined ? {} : { agent: options.agent }),
        }),
      )
      remember(recorded)
      options.onRecorded?.(recorded)
    },
    onStepError: async ({ error }) => report(error),
    onError: async ({ error }) => {
      // Reported at the step's end (with its partial output) or, failing that, when the call ends.
      if ((isRecord(error) || error instanceof Error) && reported.has(error)) return
      streamError = { error }
    },
    onEnd: async () => {
      await flushStreamError()
      if (options.prune !== false) await cm((manager) => manager.prune(sessionId))
    },
  }

  const user = async (input: string | UserMessageInput) => {
    const given: UserMessageInput = typeof input === "string" ? { text: input } : input
    const withAgent =
      options.agent === undefined || given.agent !== undefined ? given : { ...given, agent: options.agent }
    await cm((manager) => manager.recordUserMessage(sessionId, withAgent))
    return { prompt: given.text ?? "" }
  }

  // Read through a function: TypeScript does not see the hooks assign `lastError` during the awaited call.
  const askedToCompact = (): boolean => reportedThisAttempt && lastError?.action === "compact"

  const run = async <A>(call: () => PromiseLike<A>, runOptions?: { readonly maxAttempts?: number | undefined }) => {
    const maxAttempts = Math.max(1, Math.floor(runOptions?.maxAttempts ?? 3))
    lastError = undefined
    for (let attempt = 1; ; attempt++) {
      reportedThisAttempt = false
      let result: A
      try {
        result = await call()
      } catch (error) {
        await flushStreamError()
        if (askedToCompact() && attempt < maxAttempts) continue
        throw error
      }
      await flushStreamError()
      // A streamed call resolves even when its stream failed; an overflow it reported still asks for another try.
      if (askedToCompact() && attempt < maxAttempts) continue
      return result
    }
  }

  const recordToolResult = async (toolCallId: string, outcome: ToolOutcome) => {
    const pending = pendingCalls.get(toolCallId)
    if (pending === undefined) return undefined
    pendingCalls.delete(toolCallId)
    const input = pending.part.state.input
    const state =
      "output" in outcome
        ? { status: "completed" as const, input, output: toolOutput(outcome.output) }
        : { status: "error" as const, input, error: errorText(outcome.error) }
    return cm((manager) =>
      manager.recordToolResult(sessionId, { messageId: pending.messageId, partId: pending.part.id, state }),
    )
  }

  return {
    sessionId,
    settings,
    user,
    run,
    recordToolResult,
    lastError: () => lastError,
    lastPrepared: () => lastPrepared,
  }
}

/** Hooks bound to the `ContextManager` of the current Effect context. */
export const make = (options: Options): Effect.Effect<Hooks, never, ContextManager> =>
  Effect.map(Effect.context<ContextManager>(), (context) =>
    fromRuntime({ runPromise: (effect) => Effect.runPromiseWith(context)(effect) }, options),
  )
