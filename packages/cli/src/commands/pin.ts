/**
 * `pivot pin --db FILE <session> <message> [--part PART] [--budget TOKENS]` and `pivot unpin --db FILE <session>
 * <message> [--part PART]`: pin a stored message (or one part of it) so that it stays verbatim in every window after
 * every pivot, or remove its pins (issue 31). They write: a `ContextPinned` (with any `ContextUnpinned` the budget
 * needed) or `ContextUnpinned` events. The rules are core's (`Pins`, decided by `Session.decide`); refusals are
 * one-line typed errors (`UnknownMessage`, `NotPinnable`, `PinOverBudget`).
 *
 * The budget is `pin_share` (10 %) of the usable window of the session's model, looked up in pivot's model catalog;
 * `--budget TOKENS` gives it for a model the catalog does not know (the session's own settings are not recorded).
 */
import { Ids, Pins, Session } from "@pivot/core"
import { ReadModels } from "@pivot/store"
import * as Clock from "effect/Clock"
import { Argument, Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliIo, type Entry, report, UsageError } from "./Command.ts"
import { countFlag, sqliteFile } from "./Flags.ts"
import { checkReadable, checkSessionName, orCliError, storedSessionId } from "./Source.ts"
import { num, plural } from "./Text.ts"

const flags = {
  session: Argument.String("session").pipe(Argument.withDescription("the session (ses_…)"), Argument.optional),
  message: Argument.String("message").pipe(Argument.withDescription("the message id (msg_…)"), Argument.optional),
  db: Flag.String("db").pipe(
    sqliteFile,
    Flag.withMetavar("FILE"),
    Flag.withDescription("the pivot database (required; it must exist)"),
    Flag.optional,
  ),
  part: Flag.String("part").pipe(
    Flag.withMetavar("PART"),
    Flag.withDescription("only this part of the message (prt_…); a pinned part keeps its whole message in view"),
    Flag.optional,
  ),
}

/** The arguments both commands need, checked: one-line usage errors for what is missing or malformed. */
const target = (options: {
  readonly session: Option.Option<string>
  readonly message: Option.Option<string>
  readonly db: Option.Option<string>
  readonly part: Option.Option<string>
}) =>
  Effect.gen(function* () {
    if (Option.isNone(options.db)) return yield* new UsageError({ message: "--db FILE is required" })
    if (Option.isNone(options.session)) return yield* new UsageError({ message: "the session is required" })
    yield* checkSessionName(options.session.value, "the session")
    if (Option.isNone(options.message)) return yield* new UsageError({ message: "the message id (msg_…) is required" })
    const messageId = options.message.value
    if (!messageId.startsWith("msg_"))
      return yield* new UsageError({ message: `${JSON.stringify(messageId)} is not a message id (msg_…)` })
    const partId = Option.getOrUndefined(options.part)
    if (partId !== undefined && !partId.startsWith("prt_"))
      return yield* new UsageError({ message: `--part ${JSON.stringify(partId)} is not a part id (prt_…)` })
    // Never create a database: a pin needs a stored session.
    yield* checkReadable(options.db.value)
    return {
      db: options.db.value,
      sessionId: yield* storedSessionId(options.db.value, options.session.value),
      messageId: messageId as Ids.MessageId,
      ...(partId === undefined ? {} : { partId: partId as Ids.PartId }),
    }
  })

/** Runs `use` with the session handler over the database (the runtime is loaded only by the writing commands). */
const withSessions = <A, E>(
  db: string,
  use: (sessions: import("@pivot/runtime").Sessions.SessionsShape) => Effect.Effect<A, E>,
) =>
  Effect.gen(function* () {
    const { Sessions } = yield* Effect.promise(() => import("@pivot/runtime"))
    const layer = Sessions.Sessions.layer({}).pipe(
      Layer.provide(Ids.Ids.layer),
      Layer.provide(ReadModels.layerSqlite({ filename: db })),
    )
    return yield* Effect.provide(Effect.flatMap(Sessions.Sessions, use), layer)
  })

const { synopsis: pinSynopsis, summary: pinSummary } = listing("pin")

/** The `pin` command. */
export const pin: Entry = {
  name: "pin",
  synopsis: pinSynopsis,
  command: Command.make(
    "pin",
    {
      ...flags,
      budget: countFlag(
        "budget",
        "TOKENS",
        "the pin budget (default: 10 % of the usable window of the session's model, from pivot's model catalog)",
      ),
    },
    (options) =>
      report(
        "pin",
        pinSynopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          const asked = yield* target(options)
          const { Config } = yield* Effect.promise(() => import("@pivot/runtime"))
          const outcome = yield* orCliError(
            withSessions(asked.db, (sessions) =>
              Effect.gen(function* () {
                // The message's model sizes the budget (a whole-log read: a one-shot process holds no live state).
                const state = yield* sessions.history(asked.sessionId)
                const model = Session.message(state.session, asked.messageId)?.model
                const limits = model === undefined ? undefined : Config.catalogLimits(model)
                const given = Option.getOrUndefined(options.budget)
                const budget =
                  given ?? (limits !== undefined ? Pins.budget({}, limits) : model === undefined ? 0 : undefined)
                if (budget === undefined) return { unknownModel: `${model!.providerId}/${model!.modelId}` } as const
                const at = yield* Clock.currentTimeMillis
                const executed = yield* sessions.execute(asked.sessionId, {
                  _tag: "Pin",
                  at,
                  messageId: asked.messageId,
                  ...(asked.partId === undefined ? {} : { partId: asked.partId }),
                  by: "user",
                  budget,
                })
                return { executed } as const
              }),
            ),
          )
          if ("unknownModel" in outcome)
            return yield* new UsageError({
              message: `the model ${outcome.unknownModel} is not in pivot's catalog: give the pin budget with --budget TOKENS`,
            })
          const executed = outcome.executed
          const what =
            asked.partId === undefined ? `message ${asked.messageId}` : `part ${asked.partId} of ${asked.messageId}`
          const pinnedEvent = executed.events.find((e) => e._tag === "ContextPinned")
          if (pinnedEvent === undefined || pinnedEvent._tag !== "ContextPinned") {
            io.out(`${what} was already pinned in session ${asked.sessionId}; nothing written`)
            return
          }
          const gave = executed.events.flatMap((e) => (e._tag === "ContextUnpinned" ? [e.partId ?? e.messageId] : []))
          io.out(
            `pinned ${what} in session ${asked.sessionId} (~${num(pinnedEvent.tokens)} tokens; pins use ` +
              `${num(Pins.pinnedTokens(executed.state.session.window.pins))} of ${num(pinnedEvent.budget)})` +
              (gave.length === 0 ? "" : `; unpinned to make room: ${gave.join(", ")}`),
          )
        }),
      ),
  ).pipe(
    Command.withDescription(
      "Pins a stored message (or one part of it) so that it stays verbatim in every window after every pivot, right after the summary. Writes a ContextPinned event (and a ContextUnpinned for each older pin the budget needed, oldest first). The budget is 10 % of the usable window of the session's model unless --budget gives it. Never creates a database.",
    ),
    Command.withShortDescription(pinSummary),
    Command.withExamples([
      {
        command: "pivot pin --db .pivot/pivot.db ses_abc msg_0123",
        description: "keep message msg_0123 in every later window",
      },
    ]),
  ),
}

const { synopsis: unpinSynopsis, summary: unpinSummary } = listing("unpin")

/** The `unpin` command. */
export const unpin: Entry = {
  name: "unpin",
  synopsis: unpinSynopsis,
  command: Command.make("unpin", flags, (options) =>
    report(
      "unpin",
      unpinSynopsis,
      Effect.gen(function* () {
        const io = yield* CliIo
        const asked = yield* target(options)
        const at = yield* Clock.currentTimeMillis
        const executed = yield* orCliError(
          withSessions(asked.db, (sessions) =>
            sessions.execute(asked.sessionId, {
              _tag: "Unpin",
              at,
              messageId: asked.messageId,
              ...(asked.partId === undefined ? {} : { partId: asked.partId }),
              by: "user",
            }),
          ),
        )
        const what =
          asked.partId === undefined ? `message ${asked.messageId}` : `part ${asked.partId} of ${asked.messageId}`
        io.out(
          executed.events.length === 0
            ? `${what} was not pinned in session ${asked.sessionId}; nothing written`
            : `unpinned ${what} in session ${asked.sessionId} (${plural(executed.events.length, "pin")} removed)`,
        )
      }),
    ),
  ).pipe(
    Command.withDescription(
      "Removes the pins of a stored message (or only the pin of one part): from the next pivot on it is summarised like any other message. Writes a ContextUnpinned event per pin removed; nothing when it was not pinned. Never creates a database.",
    ),
    Command.withShortDescription(unpinSummary),
    Command.withExamples([
      { command: "pivot unpin --db .pivot/pivot.db ses_abc msg_0123", description: "stop keeping msg_0123" },
    ]),
  ),
}
