// The read models opened read-only (what `pivot window`, `inspect` and `serve` do): on a database written by the
// runtime alone, which has none of their tables, `sync` answers "absent" from one look at the schema, not from a
// failing statement (issue 32: the failing statement's error, effect/sql's classified `SqlError`, cost `pivot
// window` more than its own read of the log). With the tables present and current it answers the head; behind the
// log it still fails (a read-only connection cannot catch up); an unknown session is still `UnknownSession`.
// `ReadOnly.layerSqlite` (which loads the read models' code only when their tables exist, ADR 0062) answers the same.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, type Exit } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, ReadModels, ReadOnly, SessionLog } from "../../src/index.ts"
import { appendGenerated, type GeneratedSession, sessionArb } from "./support.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-read-models-ro-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let files = 0
const fresh = () => path.join(dir, `ro-${++files}.db`)

const session: GeneratedSession = fc.sample(sessionArb(12), { numRuns: 1, seed: 11 })[0]!

const writeWith = <E>(layer: typeof EventStore.layerSqlite | typeof ReadModels.layerSqlite, file: string) =>
  Effect.runPromise(
    appendGenerated("ses_ro", session).pipe(Effect.provide(layer({ filename: file })) as never) as Effect.Effect<
      number,
      E
    >,
  )

/** The two read-only opens: the read models' layer, and the one that loads their code on demand. */
const opens = [
  [
    "ReadModels.layerSqlite({ readonly: true })",
    (file: string) => ReadModels.layerSqlite({ filename: file, readonly: true }),
  ],
  ["ReadOnly.layerSqlite", (file: string) => ReadOnly.layerSqlite({ filename: file })],
] as const

/** `sync` of `sessionId` on `file` opened read-only: its exit, and the files beside the database afterwards. */
const syncWith = async (
  open: (file: string) => ReturnType<typeof ReadOnly.layerSqlite>,
  file: string,
  sessionId: string,
) => {
  const exit = await Effect.runPromise(
    Effect.exit(
      Effect.gen(function* () {
        return yield* (yield* ReadModels.ReadModels).sync(sessionId)
      }).pipe(Effect.provide(open(file))),
    ),
  )
  const beside = fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith(`${path.basename(file)}-`))
  return { exit, beside }
}

const failureOf = (exit: Exit.Exit<unknown, unknown>) =>
  exit._tag === "Failure" ? (exit.cause.reasons[0] as { readonly error?: unknown } | undefined)?.error : undefined

describe.each(opens)("read models opened read-only (SQLite) by %s", (_, open) => {
  const syncReadOnly = (file: string, sessionId: string) => syncWith(open, file, sessionId)

  it("on a database the runtime wrote alone (no read-model tables), sync fails with StoreUnavailable saying so, and nothing is written", async () => {
    const file = fresh()
    await writeWith(EventStore.layerSqlite, file)
    const before = fs.readFileSync(file)
    const { exit, beside } = await syncReadOnly(file, "ses_ro")
    const error = failureOf(exit) as { readonly _tag: string; readonly reason: string } | undefined
    expect(error?._tag).toBe("StoreUnavailable")
    expect(error?.reason).toBe(ReadModels.NO_READ_MODELS)
    expect(beside).toEqual([])
    expect(fs.readFileSync(file).equals(before)).toBe(true)
  })

  it("on the same database, an unknown session is still UnknownSession (the head is read first)", async () => {
    const file = fresh()
    await writeWith(EventStore.layerSqlite, file)
    const error = failureOf((await syncReadOnly(file, "ses_nope")).exit) as { readonly _tag: string } | undefined
    expect(error?._tag).toBe("UnknownSession")
  })

  it("with the read models written inline (current), sync answers the head", async () => {
    const file = fresh()
    const head = await writeWith(ReadModels.layerSqlite, file)
    const { exit, beside } = await syncReadOnly(file, "ses_ro")
    expect(exit._tag === "Success" ? exit.value : exit).toBe(head)
    expect(beside).toEqual([])
  })

  it("with the tables present but behind the log (one event appended without them), sync still fails", async () => {
    const file = fresh()
    const head = await writeWith(ReadModels.layerSqlite, file)
    const last = (await Effect.runPromise(
      SessionLog.read("ses_ro").pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
    )) as ReadonlyArray<SessionLog.Logged>
    await Effect.runPromise(
      SessionLog.append("ses_ro", head, [
        { id: SessionLog.eventId("ses_ro", head + 1), event: last[last.length - 1]!.event },
      ]).pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
    )
    const error = failureOf((await syncReadOnly(file, "ses_ro")).exit) as { readonly reason?: string } | undefined
    expect(error).toBeDefined()
    expect(error?.reason).not.toBe(ReadModels.NO_READ_MODELS)
  })
})

describe("ReadOnly.layerSqlite against ReadModels.layerSqlite({ readonly: true })", () => {
  /** What each query answers (its exit), on `file` opened by `open`. */
  const answers = (open: (file: string) => ReturnType<typeof ReadOnly.layerSqlite>, file: string, sessionId: string) =>
    Effect.runPromise(
      Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        const all = {
          sessions: readModels.sessions,
          sync: readModels.sync(sessionId),
          window: readModels.window(sessionId),
          usage: readModels.usage(sessionId),
          compactions: readModels.compactions(sessionId),
          pruned: readModels.pruned(sessionId),
          audit: readModels.audit(sessionId),
          origin: readModels.origin(sessionId, 5),
          recall: readModels.recall(sessionId, "output", 5),
          timeline: readModels.timeline(sessionId),
        }
        // The value, or the error it failed with (the causes' spans differ: one more call on the way).
        const exits: Record<string, unknown> = {}
        for (const [name, effect] of Object.entries(all)) {
          const exit = yield* Effect.exit(effect as Effect.Effect<unknown, unknown>)
          exits[name] = exit._tag === "Success" ? { value: exit.value } : { error: failureOf(exit) }
        }
        return exits
      }).pipe(Effect.provide(open(file))),
    )

  it("with or without the read models' tables, for a known or an unknown session, every query answers the same", async () => {
    const without = fresh()
    await writeWith(EventStore.layerSqlite, without)
    const withTables = fresh()
    await writeWith(ReadModels.layerSqlite, withTables)
    for (const file of [without, withTables])
      for (const sessionId of ["ses_ro", "ses_nope"])
        expect(await answers(opens[1][1], file, sessionId)).toEqual(await answers(opens[0][1], file, sessionId))
  })
})
