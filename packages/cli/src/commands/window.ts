/**
 * `pivot window <export.json | --db FILE --session ID> [--at VERSION] [--format text|json]`: the model input of the
 * next model call (or of the call after event `VERSION`). `--format json` prints exactly
 * `{ "messages": [ { "sourceMessageId": "<id>", "message": <AI SDK ModelMessage> } ] }`.
 */
import { Audit, type Message, PruneIndex, ValidWindow, Window } from "@pivot/core"
import { Replay, type SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { type Command, Exit, parseOptions, UsageError } from "./Command.ts"
import { runProgram } from "./Program.ts"
import {
  estimateTokens,
  type Opened,
  orCliError,
  parseAt,
  parseFormat,
  parseSource,
  sourceSpec,
  versionOf,
  withSession,
} from "./Source.ts"
import { num, plural } from "./Text.ts"
import * as WindowText from "./WindowText.ts"

/**
 * The stored messages the model saw after `version`: from the window read model when it is the newest version of a
 * database session, otherwise replayed from the log (from the latest pivot's origin).
 */
export const windowAt = (opened: Opened, version: number) =>
  opened.readModels !== undefined && version === opened.head
    ? orCliError(opened.readModels.window(opened.sessionId))
    : Effect.map(orCliError(Replay.windowAt(opened.sessionId, version)), Window.messages)

/** Tokens cleared per pruned part, as the prune index records them (up to `version`). */
export const prunedTokens = (opened: Opened, version: number) =>
  Effect.gen(function* () {
    const entries =
      opened.readModels !== undefined && version === opened.head
        ? (yield* orCliError(opened.readModels.pruned(opened.sessionId))).entries
        : foldPruned((yield* opened.log).filter((l) => l.meta.version <= version)).entries
    return new Map(entries.map((e) => [e.partId as string, e.tokens]))
  })

const foldPruned = (log: ReadonlyArray<SessionLog.Logged>) => {
  let state = PruneIndex.projection.initial
  for (const { event, meta } of log) state = PruneIndex.projection.evolve(state, event, meta)
  return state
}

/** The ids of the events each window message came from (the audit view), up to `version`. */
export const sourcesAt = (opened: Opened, version: number) =>
  Effect.gen(function* () {
    if (opened.readModels !== undefined && version === opened.head) {
      const entries = yield* orCliError(opened.readModels.audit(opened.sessionId))
      return new Map(entries.map((e) => [e.message.id as string, e.eventIds]))
    }
    let state = Audit.projection.initial
    for (const { event, meta } of yield* opened.log)
      if (meta.version <= version) state = Audit.projection.evolve(state, event, meta)
    return new Map(Audit.entries(state).map((e) => [e.message.id as string, e.eventIds]))
  })

/** The window rendered as the JSON the `--format json` output promises. */
export const windowJson = (messages: ReadonlyArray<Message.Message>) => ValidWindow.toJson(messages)

/** The `window` command. */
export const window: Command = {
  name: "window",
  args: "<export.json | --db FILE --session ID> [--at VERSION] [--format text|json] [--sources]",
  summary: "the model input of the next model call (or right after event VERSION); --sources: the events behind it",
  run: (args, io) => {
    const options = parseOptions(args, { ...sourceSpec, flags: ["sources"] })
    const source = parseSource(options)
    const at = parseAt(options)
    const format = parseFormat(options)
    const withSources = options.flags.has("sources")
    if (withSources && format === "json") throw new UsageError("--sources goes with the text format")
    const program = withSession(source, (opened) =>
      Effect.gen(function* () {
        const version = yield* versionOf(opened, at)
        const messages = yield* windowAt(opened, version)
        if (format === "json") {
          io.out(windowJson(messages))
          return Exit.ok
        }
        const rendered = ValidWindow.render(messages)
        const header =
          `session ${opened.sessionId} · version ${version} of ${opened.head} · ` +
          `${plural(messages.length, "stored message")} → ${plural(rendered.length, "model message")} · ` +
          `~${num(estimateTokens(rendered))} tokens`
        const width = Math.max(80, Math.min(io.columns ?? 120, 200))
        const pruned = yield* prunedTokens(opened, version)
        const sources = withSources ? yield* sourcesAt(opened, version) : undefined
        for (const line of WindowText.format(messages, header, { width, pruned, sources })) io.out(line)
        return Exit.ok
      }),
    )
    return runProgram("window", io, program)
  },
}
