/**
 * `pivot import <file|folder> [--db FILE] [--encrypt] [--follow]`: a Claude Code or Codex CLI transcript, or a folder of
 * them, is stored incrementally (`Transcripts.ts`); otherwise the file is an OpenCode export, stored as below.
 *
 * `pivot import <export.json> [--db FILE] [--encrypt]`: stores an OpenCode session (the JSON `opencode export <id>` prints) in a
 * pivot database, with its read models, and prints the session id and what was stored.
 *
 * Importing is all or nothing, and idempotent per session: importing the same export again is a no-op (exit 0,
 * "nothing to import"); importing a different export of a session already stored is refused (exit 1), since events
 * are never rewritten. `--encrypt` stores the session's text encrypted with its own key (crypto-shredding), so
 * `pivot forget` can erase it later.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Events } from "@pivot/core"
import { EventStore, ReadModels, SessionLog } from "@pivot/store"
import { Argument, Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliError, CliIo, describe, type Entry, report, UsageError } from "./Command.ts"
import { sqliteFile } from "./Flags.ts"
import * as Progress from "./Progress.ts"
import { DEFAULT_DB, importFile, MAX_INPUT_BYTES, orCliError } from "./Source.ts"
import { countByType, num, plural } from "./Text.ts"
import { importTranscripts, isTranscript, transcriptsIn } from "./Transcripts.ts"

const sameEvents = (a: ReadonlyArray<Events.Event>, b: ReadonlyArray<Events.Event>) =>
  a.length === b.length &&
  a.every((event, i) => JSON.stringify(Events.encode(event)) === JSON.stringify(Events.encode(b[i]!)))

const { synopsis, summary } = listing("import")

/** Events per append of an import (all of them in one transaction). */
const BATCH = 1000

/** The `import` command. */
export const importCommand: Entry = {
  name: "import",
  synopsis,
  command: Command.make(
    "import",
    {
      file: Argument.String("file").pipe(
        Argument.withDescription(
          "the JSON `opencode export <id>` prints, a Claude Code or Codex CLI session (.jsonl), or a folder of those sessions",
        ),
        Argument.optional,
      ),
      db: Flag.String("db").pipe(
        sqliteFile,
        Flag.withMetavar("FILE"),
        Flag.withDescription(`the pivot database (default ${DEFAULT_DB}; created with its folder when missing)`),
        Flag.withDefault(DEFAULT_DB),
      ),
      encrypt: Flag.Boolean("encrypt").pipe(
        Flag.withDefault(false),
        Flag.withDescription("store the session's text encrypted with its own key, so `pivot forget` can erase it"),
      ),
      follow: Flag.Boolean("follow").pipe(
        Flag.withDefault(false),
        Flag.withDescription("keep importing what a live Claude Code or Codex CLI session appends, until interrupted"),
      ),
    },
    (options) => report("import", synopsis, run(options)),
  ).pipe(
    Command.withDescription(
      `Stores an OpenCode session export in a pivot database (default ${DEFAULT_DB}), with its read models, and prints the session id and what was stored. All or nothing, and idempotent per session: the same export again is a no-op; a different export of a stored session is refused.`,
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      {
        command: "opencode export ses_abc > session.json && pivot import session.json",
        description: "import a session",
      },
      { command: "pivot import session.json --db work/pivot.db", description: "into another database" },
      {
        command: "pivot import ~/.claude/projects/-home-me-app",
        description: "every Claude Code session of a project",
      },
      {
        command: "pivot import ~/.codex/sessions/2025/10/02/rollout-….jsonl --follow",
        description: "a live Codex session",
      },
    ]),
  ),
}

/** The agent transcripts to import for `file` (itself, or the ones in a folder), or undefined for an OpenCode export. */
const transcripts = (file: string) =>
  Effect.gen(function* () {
    // A file that cannot be read is left to the export path, which says so in its own words.
    const stat = fs.statSync(file, { throwIfNoEntry: false })
    if (stat === undefined) return undefined
    if (stat.isDirectory()) return yield* transcriptsIn(file)
    // Not a regular file, or too big: the export path refuses it with its own message, before reading anything.
    if (!stat.isFile() || stat.size > MAX_INPUT_BYTES) return undefined
    const head = yield* Effect.try({
      try: () => {
        const fd = fs.openSync(file, "r")
        const buffer = Buffer.alloc(Math.min(stat.size, 1 << 20))
        fs.readSync(fd, buffer, 0, buffer.length, 0)
        fs.closeSync(fd)
        return buffer.toString("utf8")
      },
      catch: (cause) => new CliError({ message: `cannot read ${file}: ${describe(cause)}` }),
    })
    return isTranscript(head) ? [file] : undefined
  })

const run = (options: {
  readonly file: Option.Option<string>
  readonly db: string
  readonly encrypt: boolean
  readonly follow: boolean
}) =>
  Effect.gen(function* () {
    const io = yield* CliIo
    if (Option.isNone(options.file)) return yield* new UsageError({ message: "give the export file to import" })
    const file = options.file.value
    const db = options.db
    const agentFiles = yield* transcripts(file)
    if (agentFiles !== undefined || options.follow) {
      if (agentFiles === undefined)
        return yield* new UsageError({
          message: `--follow reads Claude Code and Codex CLI sessions; ${file} is not one`,
        })
      if (options.encrypt)
        return yield* new UsageError({
          message: "--encrypt is for OpenCode exports; agent sessions are stored in plain text",
        })
      if (options.follow && (agentFiles.length !== 1 || agentFiles[0] !== file))
        return yield* new UsageError({ message: "--follow follows one session file, not a folder" })
      yield* Effect.try({
        try: () => fs.mkdirSync(path.dirname(path.resolve(db)), { recursive: true }),
        catch: (cause) => new CliError({ message: `cannot create the directory of ${db}: ${describe(cause)}` }),
      })
      if (agentFiles.length === 0) return yield* new CliError({ message: `${file} holds no .jsonl session files` })
      return yield* importTranscripts({ files: agentFiles, db, follow: options.follow })
    }
    // The planned events in an array of our own, each let go once it is stored (the read models keep the stored
    // payloads), so two copies of a big session's events never stay alive together; counted first, for the summary.
    const { sessionId, report, events, total, counts } = yield* Effect.map(importFile(file, io), (imported) => ({
      sessionId: imported.sessionId,
      report: imported.report,
      events: [...imported.events] as Array<Events.Event | undefined>,
      total: imported.events.length,
      counts: countByType(imported.events),
    }))
    yield* Effect.try({
      try: () => fs.mkdirSync(path.dirname(path.resolve(db)), { recursive: true }),
      catch: (cause) => new CliError({ message: `cannot create the directory of ${db}: ${describe(cause)}` }),
    })
    const store = Effect.gen(function* () {
      const readModels = yield* ReadModels.ReadModels
      const stored = yield* SessionLog.version(sessionId)
      if (stored > 0) {
        const log = yield* SessionLog.read(sessionId)
        if (
          sameEvents(
            log.map((l) => l.event),
            events as ReadonlyArray<Events.Event>,
          )
        ) {
          // Asked to encrypt what is stored in plain text: saying "nothing to import" would leave it readable.
          if (options.encrypt && !(yield* (yield* EventStore).isSealed(Events.streamName(sessionId))))
            return yield* new CliError({
              message: `session ${sessionId} is already in ${db} (${plural(stored, "event")}), stored in plain text: --encrypt cannot encrypt it there; import it into another database`,
            })
          io.out(`session ${sessionId} is already in ${db} (${plural(stored, "event")}, the same): nothing to import`)
          return
        }
        return yield* new CliError({
          message: `session ${sessionId} is already in ${db} with ${plural(stored, "event")} that differ from this export (${plural(total, "event")}); nothing imported`,
        })
      }
      // One transaction (all or nothing), appended in batches so that only one batch is ever encoded and
      // serialised at a time (its entries made as it goes, ids as `SessionLog.fromEvents` numbers them); the read
      // models are folded as it goes and written once at the end.
      const storing = Progress.start(io, "import: storing", "events", { total })
      const batch = (from: number) => {
        const entries: Array<{ readonly id: string; readonly event: Events.Event }> = []
        for (let i = from; i < Math.min(from + BATCH, total); i++) {
          entries.push({ id: SessionLog.eventId(sessionId, i + 1), event: events[i]! })
          events[i] = undefined
        }
        return entries
      }
      yield* readModels.bulk(
        Effect.forEach(
          Array.from({ length: Math.ceil(total / BATCH) }, (_, k) => k * BATCH),
          (from) =>
            Effect.tap(
              SessionLog.append(sessionId, from === 0 ? "no-stream" : from, batch(from), { seal: options.encrypt }),
              () => Effect.sync(() => storing.advance(Math.min(BATCH, total - from))),
            ),
          { discard: true },
        ),
      )
      storing.done()
      const pivots = (yield* readModels.compactions(sessionId)).filter(
        (c) => c.status === "finished" || c.status === "continued",
      )
      const pruned = yield* readModels.pruned(sessionId)
      io.out(`imported session ${sessionId} into ${db}`)
      io.out(`  ${plural(total, "event")}: ${counts.map(([type, n]) => `${num(n)} ${type}`).join(", ")}`)
      const dropped = Object.entries(report.dropped)
      io.out(
        `  ${plural(report.messages, "message")}, ${plural(report.parts, "part")}` +
          (dropped.length === 0 ? "" : ` (left out: ${dropped.map(([type, n]) => `${n} ${type}`).join(", ")})`),
      )
      io.out(
        `  window: ${plural(report.window, "message")} · ${plural(pivots.length, "pivot")} · ${plural(pruned.entries.length, "pruned output")}`,
      )
      for (const warning of report.warnings) io.out(`  note: ${warning}`)
      io.out(`next: pivot inspect --db ${db} --session ${sessionId}`)
    })
    return yield* orCliError(Effect.provide(store, ReadModels.layerSqlite({ filename: db })))
  })
