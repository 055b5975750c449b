/**
 * Projection plugins: values handed to `ContextManager.layer` (no registry) that add context to or replace the
 * compaction prompt, veto the automatic continue, transform the window the model sees, or redact text.
 *
 * Plugins are untrusted. Every hook call is time-boxed, its output is validated by a Schema (and size bounds; a
 * transformed window by the model-input invariant), and a hook that throws, hangs or answers something invalid is ignored; each such failure is recorded as a `PluginFailed`
 * event. A plugin never touches state: the runtime records what it contributed.
 *
 * **Example**
 * ```ts
 * const plugin: Plugins.Plugin = {
 *   name: "ticket",
 *   compactionContext: () => ({ context: ["The ticket is PIV-42."] }),
 *   autoContinue: ({ midTask }) => ({ enabled: midTask }),
 * }
 * ContextManager.layer({ model, plugins: [plugin] })
 * ```
 */
import { Message, ValidWindow } from "@pivot/core"
import { Cause, Duration, Effect, Exit, Option, Result, Schema, SchemaIssue } from "effect"
import { timeBox } from "./internal/timeBox.ts"
import type { PluginHook } from "./RuntimeEvents.ts"

/** What a hook may answer: a value, a promise of one, or an Effect. */
export type HookResult<A> = A | PromiseLike<A> | Effect.Effect<A, unknown>

/** Input of `compactionContext`. */
export interface CompactionContextInput {
  readonly sessionId: string
  readonly markerId: string
  readonly auto: boolean
  readonly overflow: boolean
  readonly previousSummary?: string | undefined
}

/** Output of `compactionContext`: lines appended to the prompt, or a prompt that replaces it. */
export const CompactionContextOutput = Schema.Struct({
  context: Schema.optionalKey(Schema.Array(Schema.String)),
  prompt: Schema.optionalKey(Schema.String),
})
export type CompactionContextOutput = typeof CompactionContextOutput.Type

/** Input of `autoContinue`. */
export interface AutoContinueInput {
  readonly sessionId: string
  readonly markerId: string
  readonly overflow: boolean
  /** Whether the agent was in the middle of a task when the context filled up. */
  readonly midTask: boolean
  /** The summary just written. */
  readonly summary: string
}

/** Output of `autoContinue`: `enabled: false` vetoes the continue message. */
export const AutoContinueOutput = Schema.Struct({ enabled: Schema.Boolean })
export type AutoContinueOutput = typeof AutoContinueOutput.Type

/** Input of `transformWindow`: the window's messages in model order. */
export interface TransformWindowInput {
  readonly sessionId: string
  readonly messages: ReadonlyArray<Message.Message>
}

/** Output of `transformWindow`: the messages to render instead. */
export const TransformWindowOutput = Schema.Struct({ messages: Schema.Array(Message.Message) })
export type TransformWindowOutput = typeof TransformWindowOutput.Type

/** Input of `redact`: texts about to reach a summariser or the stored summary. */
export interface RedactInput {
  readonly sessionId: string
  readonly stage: "summarizer-input" | "prompt" | "summary"
  readonly texts: ReadonlyArray<string>
}

/** Output of `redact`: the same number of texts, redacted. */
export const RedactOutput = Schema.Struct({ texts: Schema.Array(Schema.String) })
export type RedactOutput = typeof RedactOutput.Type

/** A projection plugin. Every hook is optional. */
export interface Plugin {
  /** Names the plugin in recorded events. */
  readonly name: string
  /** Time limit of each hook call; default `Plugins.DEFAULT_TIMEOUT`. */
  readonly timeout?: Duration.Input | undefined
  /** Adds context lines to the compaction prompt, or replaces it (OpenCode's `experimental.session.compacting`). */
  readonly compactionContext?: (input: CompactionContextInput) => HookResult<CompactionContextOutput>
  /** Vetoes the continue message after an automatic compaction (OpenCode's `experimental.compaction.autocontinue`). */
  readonly autoContinue?: (input: AutoContinueInput) => HookResult<AutoContinueOutput>
  /** Transforms the window before it is rendered for the model; not recorded, so it should be a pure function. */
  readonly transformWindow?: (input: TransformWindowInput) => HookResult<TransformWindowOutput>
  /** Redacts texts beyond pivot's own secret patterns. */
  readonly redact?: (input: RedactInput) => HookResult<RedactOutput>
}

/** The default time limit of one hook call. */
export const DEFAULT_TIMEOUT: Duration.Input = "5 seconds"

/** Bounds on what a compaction-context hook may add: it must not blow up the prompt. */
export const MAX_CONTEXT_LINES = 32
/** The longest context line or replacement prompt a plugin may give, in characters. */
export const MAX_TEXT_CHARS = 32_000

/** Why a hook call was ignored. */
export interface Failure {
  readonly plugin: string
  readonly hook: PluginHook
  readonly reason: "threw" | "timeout" | "invalid-output"
  readonly message: string
}

const describe = (error: unknown): string => {
  if (error instanceof Error) return error.message || error.name
  if (typeof error === "string") return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    return String(error)
  }
}

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const firstIssue = (error: Schema.SchemaError): string => {
  const issue = formatter(error.issue).issues[0]
  if (issue === undefined) return error.message
  const path = (issue.path ?? []).map((p) => String(typeof p === "object" && p !== null ? p.key : p)).join(".")
  return path === "" ? issue.message : `${path}: ${issue.message}`
}

/** Runs whatever the hook returns as an Effect; a synchronous throw becomes a failure. */
const invoke = (run: () => unknown): Effect.Effect<unknown, unknown> =>
  Effect.flatMap(Effect.try({ try: run, catch: (error) => error }), (out) => {
    if (Effect.isEffect(out)) return out as Effect.Effect<unknown, unknown>
    if (isPromiseLike(out)) return Effect.tryPromise({ try: () => Promise.resolve(out), catch: (error) => error })
    return Effect.succeed(out)
  })

/**
 * Calls one hook of one plugin under its time limit and validates the answer with `schema` and `check` (a further
 * check answering an error message). Never fails: answers the valid output or why it was ignored. The time limit
 * holds even for a hook that ignores interruption (it is abandoned); interrupting the caller interrupts the hook.
 */
export const call = <S extends Schema.ConstraintDecoder<unknown>>(
  plugin: Plugin,
  hook: PluginHook,
  run: () => unknown,
  schema: S,
  check: (output: S["Type"]) => string | undefined = () => undefined,
): Effect.Effect<Result.Result<S["Type"], Failure>> => {
  const fail = (reason: Failure["reason"], message: string) =>
    Result.fail<Failure>({ plugin: plugin.name, hook, reason, message })
  const timeout = plugin.timeout ?? DEFAULT_TIMEOUT
  return timeBox(invoke(run), timeout).pipe(
    Effect.exit,
    Effect.map((exit): Result.Result<S["Type"], Failure> => {
      if (Exit.isFailure(exit)) {
        const failure = Cause.findErrorOption(exit.cause)
        return fail("threw", describe(Option.isSome(failure) ? failure.value : Cause.squash(exit.cause)))
      }
      if (Option.isNone(exit.value))
        return fail("timeout", `no answer within ${Duration.format(Duration.fromInputUnsafe(timeout))}`)
      const decoded = Schema.decodeUnknownResult(schema)(exit.value.value)
      if (Result.isFailure(decoded)) return fail("invalid-output", firstIssue(decoded.failure))
      const problem = check(decoded.success)
      return problem === undefined ? Result.succeed(decoded.success) : fail("invalid-output", problem)
    }),
  )
}

/** Checks a compaction-context answer against the size bounds. */
export const checkCompactionContext = (output: CompactionContextOutput): string | undefined => {
  const lines = output.context ?? []
  if (lines.length > MAX_CONTEXT_LINES) return `context has ${lines.length} lines, more than ${MAX_CONTEXT_LINES}`
  const long = lines.findIndex((line) => line.length > MAX_TEXT_CHARS)
  if (long !== -1) return `context[${long}] is longer than ${MAX_TEXT_CHARS} characters`
  if (output.prompt !== undefined && output.prompt.length > MAX_TEXT_CHARS)
    return `prompt is longer than ${MAX_TEXT_CHARS} characters`
  if (output.prompt !== undefined && output.prompt.trim() === "") return "prompt is empty"
  return undefined
}

/** What the compaction-context hooks contributed, plugin by plugin, and which failed. */
export interface CompactionContribution {
  readonly context: ReadonlyArray<string>
  readonly prompt?: string | undefined
  readonly contributions: ReadonlyArray<{
    readonly plugin: string
    readonly context: ReadonlyArray<string>
    readonly replacedPrompt: boolean
  }>
  readonly failures: ReadonlyArray<Failure>
}

/** Runs every plugin's `compactionContext` in order: context lines accumulate; the last replacement prompt wins. */
export const compactionContext = (
  plugins: ReadonlyArray<Plugin>,
  input: CompactionContextInput,
): Effect.Effect<CompactionContribution> =>
  Effect.gen(function* () {
    const context: Array<string> = []
    let prompt: string | undefined
    const contributions: Array<CompactionContribution["contributions"][number]> = []
    const failures: Array<Failure> = []
    for (const plugin of plugins) {
      const hook = plugin.compactionContext
      if (hook === undefined) continue
      const result = yield* call(
        plugin,
        "compactionContext",
        () => hook(input),
        CompactionContextOutput,
        checkCompactionContext,
      )
      if (Result.isFailure(result)) {
        failures.push(result.failure)
        continue
      }
      const lines = result.success.context ?? []
      context.push(...lines)
      if (result.success.prompt !== undefined) prompt = result.success.prompt
      if (lines.length > 0 || result.success.prompt !== undefined)
        contributions.push({ plugin: plugin.name, context: lines, replacedPrompt: result.success.prompt !== undefined })
    }
    return { context, prompt, contributions, failures }
  })

/** The auto-continue verdict: vetoed by the first plugin answering `enabled: false`. */
export interface AutoContinueVerdict {
  readonly enabled: boolean
  readonly vetoedBy?: string | undefined
  readonly verdicts: ReadonlyArray<{ readonly plugin: string; readonly enabled: boolean }>
  readonly failures: ReadonlyArray<Failure>
}

/** Asks every plugin's `autoContinue` in order until one vetoes; a failing plugin has no say. */
export const autoContinue = (
  plugins: ReadonlyArray<Plugin>,
  input: AutoContinueInput,
): Effect.Effect<AutoContinueVerdict> =>
  Effect.gen(function* () {
    const verdicts: Array<{ readonly plugin: string; readonly enabled: boolean }> = []
    const failures: Array<Failure> = []
    for (const plugin of plugins) {
      const hook = plugin.autoContinue
      if (hook === undefined) continue
      const result = yield* call(plugin, "autoContinue", () => hook(input), AutoContinueOutput)
      if (Result.isFailure(result)) {
        failures.push(result.failure)
        continue
      }
      verdicts.push({ plugin: plugin.name, enabled: result.success.enabled })
      if (!result.success.enabled) return { enabled: false, vetoedBy: plugin.name, verdicts, failures }
    }
    return { enabled: true, verdicts, failures }
  })

/**
 * Checks a transform-window answer against the model-input invariant (`ValidWindow.replacementViolations`): an answer
 * that empties the window, repeats or reorders its messages, or breaks a rule of the rendered input is refused.
 */
export const checkTransformWindow = (
  before: ReadonlyArray<Message.Message>,
  output: TransformWindowOutput,
): string | undefined => {
  const broken = ValidWindow.replacementViolations(before, output.messages)
  if (broken.length === 0) return undefined
  const more = broken.length > 1 ? ` (and ${broken.length - 1} more)` : ""
  return `the window would not be a valid model input: ${ValidWindow.format(broken[0]!)}${more}`
}

/**
 * Runs every plugin's `transformWindow` in order, each on the previous one's output; a plugin that fails, or whose
 * output is not a valid window (`checkTransformWindow`), is skipped.
 */
export const transformWindow = (
  plugins: ReadonlyArray<Plugin>,
  input: TransformWindowInput,
): Effect.Effect<{ readonly messages: ReadonlyArray<Message.Message>; readonly failures: ReadonlyArray<Failure> }> =>
  Effect.gen(function* () {
    let messages = input.messages
    const failures: Array<Failure> = []
    for (const plugin of plugins) {
      const hook = plugin.transformWindow
      if (hook === undefined) continue
      const current = messages
      const result = yield* call(
        plugin,
        "transformWindow",
        () => hook({ sessionId: input.sessionId, messages: current }),
        TransformWindowOutput,
        (output) => checkTransformWindow(current, output),
      )
      if (Result.isFailure(result)) failures.push(result.failure)
      else messages = result.success.messages
    }
    return { messages, failures }
  })

/** Texts after every plugin's `redact`, which texts each plugin changed, and which plugins failed. */
export interface Redacted {
  readonly texts: ReadonlyArray<string>
  readonly changed: ReadonlyArray<{ readonly plugin: string; readonly index: number }>
  readonly failures: ReadonlyArray<Failure>
}

/** Runs every plugin's `redact` in order over `texts`; an answer of another length is invalid. */
export const redact = (plugins: ReadonlyArray<Plugin>, input: RedactInput): Effect.Effect<Redacted> =>
  Effect.gen(function* () {
    let texts = input.texts
    const changed: Array<{ readonly plugin: string; readonly index: number }> = []
    const failures: Array<Failure> = []
    if (texts.length === 0) return { texts, changed, failures }
    for (const plugin of plugins) {
      const hook = plugin.redact
      if (hook === undefined) continue
      const current = texts
      const result = yield* call(
        plugin,
        "redact",
        () => hook({ sessionId: input.sessionId, stage: input.stage, texts: current }),
        RedactOutput,
        (output) =>
          output.texts.length === current.length
            ? undefined
            : `answered ${output.texts.length} texts for ${current.length}`,
      )
      if (Result.isFailure(result)) {
        failures.push(result.failure)
        continue
      }
      result.success.texts.forEach((text, index) => {
        if (text !== current[index]) changed.push({ plugin: plugin.name, index })
      })
      texts = result.success.texts
    }
    return { texts, changed, failures }
  })
