/**
 * What the context manager records of a turn: the session's start, the user's messages, the model's steps, tool
 * results and provider errors. Each becomes the Decider's command, with the strategy asked after a step (through
 * `StrategyRunner.withCompaction`) whether it compacts; what each recorded is summarised for the caller.
 */
import {
  type Commands,
  Ids,
  type Message,
  type Model,
  ProviderError,
  SchemaIssues,
  Tokens,
  Traced,
  Usage as UsageFold,
} from "@pivot/core"
import { Clock, Effect, Result } from "effect"
import type * as Compaction from "./Compaction.ts"
import type { ImpossibleLimits } from "./Config.ts"
import {
  type AssistantStepInput,
  type ContextManagerShape,
  type InvalidSessionId,
  InvalidUsage,
  type Options,
  type PartInput,
  type ProviderErrorInput,
  type Recorded,
  type ToolResultInput,
  type UserMessageInput,
} from "./ContextManagerTypes.ts"
import { decodeUsage } from "./internal/checkOptions.ts"
import * as PinOps from "./Pins.ts"
import type { Command, Event, SessionsShape, State } from "./Sessions.ts"
import * as Status from "./Status.ts"
import type * as StrategyRunner from "./StrategyRunner.ts"

/** What recording needs from the context manager. */
export interface Deps {
  readonly sessions: SessionsShape
  readonly ids: Ids.Ids["Service"]
  readonly options: Options
  readonly settingsFor: (sessionId: string) => Effect.Effect<Compaction.Settings, InvalidSessionId | ImpossibleLimits>
  readonly runner: StrategyRunner.Runner
}

/** The context manager's recording operations. */
export type Recording = Pick<
  ContextManagerShape,
  "start" | "recordUserMessage" | "recordAssistantStep" | "recordToolResult" | "reportProviderError"
>

/** The recording operations over `deps`. */
export const make = ({ sessions, ids, options, settingsFor, runner }: Deps): Recording => {
  /**
   * Gives every part an id: derived from the message's when the caller named the message (so a retry of the same
   * input is the same message, not a `MessageConflict`), fresh otherwise.
   */
  const fillParts = <P extends { readonly id?: Ids.PartId | undefined }>(
    parts: ReadonlyArray<P>,
    message: Ids.MessageId | undefined,
  ) =>
    Effect.forEach(parts, (part, index) =>
      part.id !== undefined
        ? Effect.succeed(part)
        : message !== undefined
          ? Effect.succeed({ ...part, id: Ids.partOf(message, index) })
          : Effect.map(ids.part, (id) => ({ ...part, id })),
    )

  /** Starts the session in the same batch when it has not started. */
  const withStart = (sessionId: string, state: State, at: number, commands: ReadonlyArray<Command>) =>
    state.session.sessionId === undefined
      ? [
          {
            _tag: "StartSession",
            sessionId: sessionId as Ids.SessionId,
            at,
            model: options.session?.(sessionId)?.model?.ref ?? options.model.ref,
          } satisfies Command,
          ...commands,
        ]
      : commands

  const summarise = (events: ReadonlyArray<Event>, messageId?: Ids.MessageId): Recorded => ({
    events,
    overflow: events.some((e) => e._tag === "OverflowDetected"),
    ...(events.some((e) => e._tag === "CompactionRequested")
      ? { compaction: "requested" as const }
      : events.some((e) => e._tag === "CompactionAbandoned")
        ? { compaction: "abandoned" as const }
        : {}),
    ...(messageId === undefined ? {} : { messageId }),
  })

  const start = Traced.fn("ContextManager.start")(function* (
    sessionId: string,
    startOptions?: { readonly title?: string | undefined; readonly model?: Model.ModelRef | undefined },
  ) {
    const settings = yield* settingsFor(sessionId)
    const at = yield* Clock.currentTimeMillis
    const executed = yield* sessions.execute(sessionId, {
      _tag: "StartSession",
      sessionId: sessionId as Ids.SessionId,
      at,
      model: startOptions?.model ?? settings.model.ref,
      ...(startOptions?.title === undefined ? {} : { title: startOptions.title }),
    })
    return summarise(executed.events)
  })

  const recordUserMessage = Traced.fn("ContextManager.recordUserMessage")(function* (
    sessionId: string,
    input: UserMessageInput,
  ) {
    const settings = yield* settingsFor(sessionId)
    const at = yield* Clock.currentTimeMillis
    const id = input.id ?? (yield* ids.message)
    const given = [
      ...(input.text === undefined ? [] : [{ type: "text" as const, text: input.text }]),
      ...(input.parts ?? []),
    ]
    const parts = (yield* fillParts(
      given as ReadonlyArray<PartInput<Message.UserPart>>,
      input.id,
    )) as ReadonlyArray<Message.UserPart>
    const message: Message.UserMessage = {
      role: "user",
      id,
      createdAt: at,
      model: input.model ?? settings.model.ref,
      ...(input.agent === undefined ? {} : { agent: input.agent }),
      ...(input.system === undefined ? {} : { system: input.system }),
      parts,
    }
    const executed = yield* sessions.execute(sessionId, (state) =>
      withStart(sessionId, state, at, [
        { _tag: "AddUserMessage", message },
        ...PinOps.defaultPin(state, message, settings.config, settings.model.limits, at),
      ]),
    )
    return summarise(executed.events, id)
  })

  const recordAssistantStep = Traced.fn("ContextManager.recordAssistantStep")(function* (
    sessionId: string,
    input: AssistantStepInput,
  ) {
    // Checked where it enters: a wrong usage is one typed line, not a schema error deep in the event encoder.
    const usage = decodeUsage(input.usage)
    if (Result.isFailure(usage))
      return yield* new InvalidUsage({ detail: SchemaIssues.oneLine(usage.failure, "usage") })
    const settings = yield* settingsFor(sessionId)
    const at = yield* Clock.currentTimeMillis
    const id = input.id ?? (yield* ids.message)
    const parts = (yield* fillParts(input.parts, input.id)) as ReadonlyArray<Message.AssistantPart>
    const markerId = yield* ids.message
    const partId = yield* ids.part
    const state = yield* sessions.load(sessionId)
    const parentId = input.parentId ?? state.runtime.lastUserId ?? id
    const message: Message.AssistantMessage = {
      role: "assistant",
      id,
      parentId,
      createdAt: input.createdAt ?? at,
      completedAt: at,
      model: input.model ?? settings.model.ref,
      ...(input.agent === undefined ? {} : { agent: input.agent }),
      ...(input.mode === undefined ? {} : { mode: input.mode }),
      tokens: usage.success,
      ...(input.cost === undefined ? {} : { cost: input.cost }),
      ...(input.finish === undefined ? {} : { finish: input.finish }),
      parts,
    }
    // Usage measured before the latest pivot says nothing about the window now: no overflow is detected from it.
    const commandOn = (current: State): Commands.Command => ({
      _tag: "RecordAssistantStep",
      message,
      config: settings.config,
      ...(UsageFold.predatesPivot(current.runtime.usage, message) ? {} : { limits: settings.model.limits }),
      ...Status.withFixed(Status.fixedOf(current, settings, message)),
    })
    const executed = yield* sessions.execute(sessionId, (current) =>
      runner.withCompaction(commandOn(current), at, markerId, partId, false)(current),
    )
    return summarise(executed.events, id)
  })

  const recordToolResult = Traced.fn("ContextManager.recordToolResult")(function* (
    sessionId: string,
    input: ToolResultInput,
  ) {
    yield* settingsFor(sessionId)
    const at = yield* Clock.currentTimeMillis
    const executed = yield* sessions.execute(sessionId, {
      _tag: "RecordToolResult",
      at,
      messageId: input.messageId,
      partId: input.partId,
      state: input.state,
    })
    return summarise(executed.events)
  })

  const reportProviderError = Traced.fn("ContextManager.reportProviderError")(function* (
    sessionId: string,
    input: ProviderErrorInput,
  ) {
    const settings = yield* settingsFor(sessionId)
    const at = yield* Clock.currentTimeMillis
    const error = ProviderError.fromUnknown(input.error)
    const id = input.id ?? (yield* ids.message)
    const parts = (yield* fillParts(input.parts ?? [], input.id)) as ReadonlyArray<Message.AssistantPart>
    const markerId = yield* ids.message
    const partId = yield* ids.part
    const state = yield* sessions.load(sessionId)
    const message: Message.AssistantMessage = {
      role: "assistant",
      id,
      parentId: input.parentId ?? state.runtime.lastUserId ?? id,
      createdAt: at,
      model: input.model ?? settings.model.ref,
      ...(input.agent === undefined ? {} : { agent: input.agent }),
      tokens: Tokens.zero,
      ...(input.finish === undefined ? {} : { finish: input.finish }),
      parts,
    }
    const command: Commands.Command = { _tag: "ReportProviderError", at, message, error, config: settings.config }
    // After a rejection before any output the turn is replayed; after a finished call, a continue message follows.
    const executed = yield* sessions.execute(
      sessionId,
      runner.withCompaction(command, at, markerId, partId, input.finish === undefined),
    )
    const recorded = summarise(executed.events, id)
    const action =
      recorded.compaction === "requested"
        ? ("compact" as const)
        : !recorded.overflow && ProviderError.isRetryable(error)
          ? ("retry" as const)
          : ("stop" as const)
    return { ...recorded, error, action }
  })

  return { start, recordUserMessage, recordAssistantStep, recordToolResult, reportProviderError }
}
