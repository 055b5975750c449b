/**
 * `pivot window <export.json | --db FILE --session ID> [--at VERSION] [--format text|json]`: the model input of the
 * next model call (or of the call after event `VERSION`). `--format json` prints exactly
 * `{ "messages": [ { "sourceMessageId": "<id>", "message": <AI SDK ModelMessage> } ] }`. Its handler: the flags
 * effect/cli declares are in `windowCommand.ts`; this module does not import effect/cli, so the plain command line
 * runs it without loading effect/cli (`Fast.ts`, ADR 0048).
 */
import { Audit, PruneIndex, type Render, ValidWindow, Window } from "@pivot/core"
import { Replay, SessionLog } from "@pivot/store/read"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Args from "./Args.ts"
import { listing } from "./Catalog.ts"
import { CliIo, type Fast, report, UsageError } from "./Command.ts"
import { isLimited, type LimitOptions, omitted, parseLimits, select } from "./Limits.ts"
import {
  estimateTokens,
  type Opened,
  orCliError,
  parseSource,
  type SourceOptions,
  versionOf,
  withSession,
} from "./Source.ts"
import { num, plural } from "./Text.ts"
import * as WindowText from "./WindowText.ts"

/**
 * The stored messages the model saw after `version`: from the window read model when it is the newest version of a
 * database session, otherwise replayed from the log (from the latest pivot's origin). The read model is at the
 * stream's newest version when read: if a writer appended since the head was read, that is a later window, so the
 * version asked for is replayed instead (issue 32, defect 2).
 */
export const windowAt = (opened: Opened, version: number, log?: ReadonlyArray<SessionLog.Logged>) => {
  const readModels = opened.readModels
  // The log already read and decoded (the text format reads it for the prune marks): folded here, not read again.
  const replayed =
    log !== undefined && readModels === undefined
      ? Effect.succeed(Window.messages(Replay.windowOf(log, version)))
      : Effect.map(orCliError(Replay.windowAt(opened.sessionId, version)), Window.messages)
  if (readModels === undefined || version !== opened.head) return replayed
  return Effect.gen(function* () {
    const messages = yield* orCliError(readModels.window(opened.sessionId))
    // Read after the window: versions only grow, so an unchanged head means the window read was at `version`.
    const now = yield* orCliError(SessionLog.version(opened.sessionId))
    return now === version ? messages : yield* replayed
  })
}

/** Tokens cleared per pruned part, as the prune index records them (up to `version`). */
export const prunedTokens = (opened: Opened, version: number, log?: ReadonlyArray<SessionLog.Logged>) =>
  Effect.gen(function* () {
    const entries =
      opened.readModels !== undefined && version === opened.head
        ? (yield* orCliError(opened.readModels.pruned(opened.sessionId))).entries
        : foldPruned((log ?? (yield* opened.log)).filter((l) => l.meta.version <= version)).entries
    return new Map(entries.map((e) => [e.partId as string, e.tokens]))
  })

const foldPruned = (log: ReadonlyArray<SessionLog.Logged>) => {
  let state = PruneIndex.projection.initial
  for (const { event, meta } of log) state = PruneIndex.projection.evolve(state, event, meta)
  return state
}

/** The ids of the events each window message came from (the audit view), up to `version`. */
export const sourcesAt = (opened: Opened, version: number, log?: ReadonlyArray<SessionLog.Logged>) =>
  Effect.gen(function* () {
    if (opened.readModels !== undefined && version === opened.head) {
      const entries = yield* orCliError(opened.readModels.audit(opened.sessionId))
      return new Map(entries.map((e) => [e.message.id as string, e.eventIds]))
    }
    let state = Audit.projection.initial
    for (const { event, meta } of log ?? (yield* opened.log))
      if (meta.version <= version) state = Audit.projection.evolve(state, event, meta)
    return new Map(Audit.entries(state).map((e) => [e.message.id as string, e.eventIds]))
  })

/** The window rendered as the JSON the `--format json` output promises (optionally only some of its messages). */
export const windowJson = (rendered: ReadonlyArray<Render.Rendered>) => JSON.stringify({ messages: rendered }, null, 2)

const { synopsis } = listing("window")

/** The options of `pivot window`, as effect/cli hands them to the handler (`windowCommand.ts` declares them). */
export interface WindowOptions extends SourceOptions, LimitOptions {
  readonly at: Option.Option<number>
  readonly format: "text" | "json"
  readonly sources: boolean
}

/** `pivot window`: prints the window (or a usage or read error, as one line). */
export const run = (options: WindowOptions) =>
  report(
    "window",
    synopsis,
    Effect.gen(function* () {
      const io = yield* CliIo
      const source = yield* parseSource(options)
      const limits = yield* parseLimits(options)
      const at = Option.getOrUndefined(options.at)
      if (options.sources && options.format === "json")
        return yield* new UsageError({ message: "--sources goes with the text format" })
      yield* withSession(source, (opened) =>
        Effect.gen(function* () {
          const version = yield* versionOf(opened, at)
          // Without current read models the text format folds the prune marks (and the sources) from the whole
          // log: read and decoded once here, and the window folded from it too (it was read twice, issue 32).
          // The JSON format reads only up to `version`, as before.
          const log = opened.readModels === undefined && options.format === "text" ? yield* opened.log : undefined
          const messages = yield* windowAt(opened, version, log)
          const rendered = ValidWindow.render(messages)
          const numbers = select(
            rendered.map((_, i) => i + 1),
            (n) => n,
            limits,
          )
          if (options.format === "json") {
            io.out(windowJson(numbers.map((n) => rendered[n - 1]!)))
            return
          }
          const header =
            `session ${opened.sessionId} · version ${version} of ${opened.head} · ` +
            `${plural(messages.length, "stored message")} → ${plural(rendered.length, "model message")} · ` +
            `~${num(estimateTokens(rendered))} tokens`
          const width = Math.max(80, Math.min(io.columns ?? 120, 200))
          const pruned = yield* prunedTokens(opened, version, log)
          const sources = options.sources ? yield* sourcesAt(opened, version, log) : undefined
          const range = isLimited(limits)
            ? { first: numbers[0] ?? 0, last: numbers[numbers.length - 1] ?? -1 }
            : undefined
          for (const line of WindowText.format(messages, header, { width, pruned, sources, range })) io.out(line)
          const note = omitted(numbers.length, rendered.length, "model messages")
          if (note !== undefined) io.out(note)
        }),
      )
    }),
  )

/** The handler, and the options for arguments read in a plain form (`Args.ts` mirrors each flag's declaration). */
export const fast: Fast<WindowOptions> = {
  options: (parsed) =>
    Args.read(parsed, (args) => ({
      ...Args.source(args),
      at: args.count("at"),
      format: args.choice("format", ["text", "json"] as const, "text"),
      sources: args.boolean("sources"),
      ...Args.limits(args),
    })),
  run,
}
