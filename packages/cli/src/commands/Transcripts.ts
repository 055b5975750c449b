/**
 * `pivot import` of agent transcripts (Claude Code, Codex CLI): a file, or a folder holding them, stored
 * incrementally. The events are a pure function of the text whose ids come from the lines (`@pivot/agents`), so the
 * stored events of a session are always a prefix of what its file imports to now: a run appends only what is new,
 * under the stream's expected version (a second importer racing it fails rather than duplicating). `--follow` reads
 * only the bytes appended since its last read (`Follow.Follower` keeps the reader's state) and appends the new
 * events, until interrupted; a process killed between two appends leaves a prefix the next run continues from.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Follow, importTranscript, Transcript } from "@pivot/agents"
import { Events } from "@pivot/core"
import { ReadModels, SessionLog } from "@pivot/store"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { CliError, CliIo, describe, type Io } from "./Command.ts"
import { orCliError } from "./Source.ts"
import { countByType, num, plural } from "./Text.ts"

/** Whether the text is an agent transcript pivot reads (and not an `opencode export`). */
export const isTranscript = (text: string): boolean => Transcript.detect(text) !== undefined

/** The transcripts under a folder, in path order: `.jsonl` files whose content is Claude Code's or Codex CLI's. */
export const transcriptsIn = (dir: string): Effect.Effect<Array<string>, CliError> =>
  Effect.try({
    try: () =>
      (fs.readdirSync(dir, { recursive: true, encoding: "utf8" }) as Array<string>)
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => path.join(dir, f))
        .filter((f) => fs.statSync(f).isFile())
        .sort(),
    catch: (cause) => new CliError({ message: `cannot list ${dir}: ${describe(cause)}` }),
  })

const readText = (file: string): Effect.Effect<string, CliError> =>
  Effect.try({
    try: () => fs.readFileSync(file, "utf8"),
    catch: (cause) => new CliError({ message: `cannot read ${file}: ${describe(cause)}` }),
  })

const encoded = (event: Events.Event): string => JSON.stringify(Events.encode(event))

/** Events per append (each append is one transaction). */
const BATCH = 1000

/**
 * Stores what is new of one transcript's events: checks once that the stored events are the prefix it expects
 * (`known` skips that check when the caller already holds the stored count), then appends the rest in batches.
 * Answers the stream's version afterwards.
 */
const storeNew = (
  sessionId: string,
  events: ReadonlyArray<Events.Event>,
  file: string,
  db: string,
  known: number | undefined,
) =>
  Effect.gen(function* () {
    let stored = known
    if (stored === undefined) {
      stored = yield* SessionLog.version(sessionId)
      if (stored > 0) {
        const log = yield* SessionLog.read(sessionId)
        const differs = log.findIndex((l, i) => events[i] === undefined || encoded(l.event) !== encoded(events[i]!))
        if (differs !== -1)
          return yield* new CliError({
            message: `session ${sessionId} in ${db} differs from ${file} at event ${differs + 1} (of ${plural(stored, "stored event")}): events are never rewritten, nothing imported`,
          })
      }
    }
    for (let from = stored; from < events.length; from += BATCH) {
      const entries = events
        .slice(from, from + BATCH)
        .map((event, k) => ({ id: SessionLog.eventId(sessionId, from + k + 1), event }))
      yield* SessionLog.append(sessionId, from === 0 ? "no-stream" : from, entries)
    }
    return Math.max(stored, events.length)
  })

const summary = (io: Io, file: string, db: string, result: Transcript.ImportResult, added: number) => {
  const r = result.report
  const agent = r.agent === "claude-code" ? "Claude Code" : "Codex CLI"
  if (added === 0) {
    io.out(
      `${file}: ${agent} session ${result.sessionId} is up to date in ${db} (${plural(result.events.length, "event")}): nothing new`,
    )
    return
  }
  io.out(`imported ${agent} session ${result.sessionId} from ${file} into ${db}`)
  io.out(
    `  ${plural(added, "new event")} (${plural(result.events.length, "event")} in all): ${countByType(
      result.events.slice(result.events.length - added),
    )
      .map(([type, n]) => `${num(n)} ${type}`)
      .join(", ")}`,
  )
  const listed = (counts: Readonly<Record<string, number>>) =>
    Object.entries(counts)
      .map(([kind, n]) => `${n} ${kind}`)
      .join(", ")
  io.out(
    `  ${plural(r.lines, "line")}, ${plural(r.messages, "message")}, ${plural(r.compactions, "compaction")}; window: ${plural(r.window, "message")}` +
      (Object.keys(r.dropped).length === 0 ? "" : `; left out: ${listed(r.dropped)}`),
  )
  if (Object.keys(r.unknown).length > 0) io.out(`  unknown, counted and kept out: ${listed(r.unknown)}`)
  if (r.malformed > 0) io.out(`  ${plural(r.malformed, "malformed line")} skipped`)
  if (r.waiting > 0) io.out(`  a last line still being written (${plural(r.waiting, "byte")}) waits`)
  for (const warning of r.warnings) io.out(`  note: ${warning}`)
}

/** How often `--follow` looks at the file. */
const POLL = Duration.millis(250)

/** Bytes read at most at once by `--follow` (a large file is read in pieces, each stored before the next). */
const CHUNK = 4 * 1024 * 1024

/**
 * Reads the bytes of `file` from `offset` to its current size, at most CHUNK of them; empty when it did not grow.
 * Fails when the file shrank below what was read (replaced or truncated: what was stored no longer describes it).
 */
const appended = (file: string, offset: number) =>
  Effect.try({
    try: () => {
      const fd = fs.openSync(file, "r")
      try {
        const size = fs.fstatSync(fd).size
        if (size < offset) return undefined
        const buffer = Buffer.allocUnsafe(Math.min(size - offset, CHUNK))
        const read = fs.readSync(fd, buffer, 0, buffer.length, offset)
        return buffer.subarray(0, read)
      } finally {
        fs.closeSync(fd)
      }
    },
    catch: (cause) => new CliError({ message: `cannot read ${file}: ${describe(cause)}` }),
  }).pipe(
    Effect.flatMap((bytes) =>
      bytes === undefined
        ? Effect.fail(
            new CliError({
              message: `${file} shrank below the ${plural(offset, "byte")} already read (replaced or truncated); stopped following`,
            }),
          )
        : Effect.succeed(bytes),
    ),
  )

/**
 * `--follow`: reads the file from its first byte, then only what is appended (`Follow.Follower` keeps the reader's
 * state), storing each read's new events; until interrupted. The stored events are checked once against the file's,
 * as a plain import does.
 */
const followFile = (file: string, db: string, io: Io) =>
  Effect.gen(function* () {
    const follower = new Follow.Follower()
    let offset = 0
    let events: ReadonlyArray<Events.Event> = []
    // The file as it is now, in pieces of CHUNK bytes.
    for (;;) {
      const bytes = yield* appended(file, offset)
      offset += bytes.length
      events = follower.push(bytes)
      if (bytes.length < CHUNK) break
    }
    if (follower.rejected) {
      io.out(`${file}: not a Claude Code or Codex CLI transcript; skipped`)
      return
    }
    let stored = 0
    let sessionId: string | undefined
    /** The first events: what is stored is checked once against them, as a plain import does. */
    const first = (result: Transcript.ImportResult) =>
      Effect.gen(function* () {
        sessionId = result.sessionId
        const before = yield* SessionLog.version(result.sessionId)
        stored = yield* storeNew(result.sessionId, result.events, file, db, undefined)
        summary(io, file, db, result, stored - before)
      })
    if (events.length > 0) yield* first(follower.result()!)
    else io.out(`${file}: no session line yet; waiting for one`)
    io.out(`following ${file} (Ctrl-C to stop)`)
    for (;;) {
      yield* Effect.sleep(POLL)
      const bytes = yield* appended(file, offset)
      if (bytes.length === 0) continue
      offset += bytes.length
      events = follower.push(bytes)
      if (follower.rejected)
        return yield* new CliError({ message: `${file} is not a Claude Code or Codex CLI transcript` })
      if (events.length <= stored) continue
      if (sessionId === undefined) {
        yield* first(follower.result()!)
        continue
      }
      const now = yield* storeNew(sessionId, events, file, db, stored)
      io.out(`  +${plural(now - stored, "event")} (${plural(now, "event")})`)
      stored = now
    }
  })

/** Imports transcript files into the database; with `follow`, keeps one file's session up to date until interrupted. */
export const importTranscripts = (options: {
  readonly files: ReadonlyArray<string>
  readonly db: string
  readonly follow: boolean
}) =>
  Effect.gen(function* () {
    const io = yield* CliIo
    const importOne = (file: string) =>
      Effect.gen(function* () {
        if (options.follow) return yield* followFile(file, options.db, io)
        const text = yield* readText(file)
        const result = importTranscript(text, { final: true })
        if (result === undefined) {
          io.out(`${file}: not a Claude Code or Codex CLI transcript; skipped`)
          return
        }
        if (result.events.length === 0) {
          io.out(`${file}: no session line yet (or only a subagent's lines); nothing to import`)
          return
        }
        const before = yield* SessionLog.version(result.sessionId)
        const after = yield* storeNew(result.sessionId, result.events, file, options.db, undefined)
        summary(io, file, options.db, result, after - before)
      })
    let failed = 0
    const run = Effect.gen(function* () {
      for (const file of options.files) {
        // In a folder, one session that cannot be stored is said and the others still are (exit 1 at the end).
        if (options.files.length === 1) yield* importOne(file)
        else
          yield* Effect.catch(orCliError(importOne(file)), (error) =>
            Effect.sync(() => {
              failed++
              io.err(`pivot import: ${error.message}`)
            }),
          )
      }
      if (failed > 0)
        return yield* new CliError({
          message: `${plural(failed, "session")} of ${options.files.length} not imported (said above)`,
        })
    })
    return yield* orCliError(Effect.provide(run, ReadModels.layerSqlite({ filename: options.db })))
  })
