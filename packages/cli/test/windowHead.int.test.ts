/**
 * Issue 32, defect 2: `pivot window --at <head>` (or with no `--at`) reads the window read model, which is at the
 * stream's newest version when read. A writer appending between the CLI's reading of the head and its reading of the
 * window made it print a later window under the head's number, so it differed from the viewer's
 * `/window/<head>/raw` (a replay of exactly that version) while the writer ran, and agreed once the version was no
 * longer the head (then both replay). The window printed for a version is now the window at that version.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Ids, ValidWindow, Window } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, ReadModels, Replay } from "@pivot/store"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { withSession } from "../src/commands/Source.ts"
import { windowAt } from "../src/commands/window.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-window-head-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const SESSION = "ses_head"

/** A writer on its own connection, as another process: `n` more user messages. */
const write = (db: string, from: number, n: number) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sessions = yield* Sessions.Sessions
      if (from === 0)
        yield* sessions.execute(SESSION, { _tag: "StartSession", sessionId: Ids.unsafe.session(SESSION), at: 0 })
      for (let i = from; i < from + n; i++)
        yield* sessions.execute(SESSION, {
          _tag: "AddUserMessage",
          message: {
            role: "user",
            id: Ids.unsafe.message(`msg_${String(i).padStart(4, "0")}`),
            createdAt: i,
            parts: [{ type: "text", id: Ids.unsafe.part(`prt_${String(i).padStart(4, "0")}`), text: `message ${i}` }],
          },
        })
    }).pipe(
      Effect.provide(
        Sessions.Sessions.layer().pipe(
          Layer.provide(Ids.Ids.layer),
          Layer.provide(ReadModels.layerSqlite({ filename: db })),
        ),
      ),
    ),
  )

const replayed = (db: string, version: number) =>
  Effect.runPromise(
    Replay.windowAt(SESSION, version).pipe(
      Effect.map((window) => ValidWindow.toJson(Window.messages(window))),
      Effect.provide(EventStore.layerSqlite({ filename: db, readonly: true })),
    ),
  )

describe("the window at the head while a writer appends (issue 32, defect 2)", () => {
  it("given a writer appending after the head was read, then the window printed for the head is the window at it, not a later one", async () => {
    const db = path.join(dir, "moving.db")
    await write(db, 0, 3)
    const { head, json } = await Effect.runPromise(
      withSession({ _tag: "Database", db, session: SESSION }, (opened) =>
        Effect.gen(function* () {
          // The writer appends between the two reads, as a process running beside the CLI can.
          yield* Effect.promise(() => write(db, 3, 1))
          const messages = yield* windowAt(opened, opened.head)
          return { head: opened.head, json: ValidWindow.toJson(messages) }
        }),
      ),
    )
    expect(head).toBe(4)
    expect(json).toBe(await replayed(db, 4))
    expect(json).not.toBe(await replayed(db, 5))
  })

  it("given no writer, then the head's window comes from the read model and equals the replay", async () => {
    const db = path.join(dir, "still.db")
    await write(db, 0, 3)
    const json = await Effect.runPromise(
      withSession({ _tag: "Database", db, session: SESSION }, (opened) =>
        Effect.map(windowAt(opened, opened.head), ValidWindow.toJson),
      ),
    )
    expect(json).toBe(await replayed(db, 4))
  })
})
