/**
 * The read models' caches after a forget made elsewhere (issue 18 #1): a store layer A holding a session's folded read
 * models in memory (and a snapshot of them) must not write the forgotten text back when it appends next, whether the
 * forget came from another layer with the read-model hooks (`pivot forget`) or from a bare event store without them.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Events, Ids } from "@pivot/core"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, ReadModels, SessionLog } from "../../src/index.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-forget-caches-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const SECRET = "zebraquokka-forgotten-word"
const SESSION = "ses_forget_caches"
const model = { providerId: "anthropic", modelId: "claude-test" }

const user = (n: number, text: string): Events.Event => ({
  _tag: "UserMessageAdded",
  at: n,
  message: {
    role: "user",
    id: Ids.unsafe.message(`msg_u${n}`),
    createdAt: n,
    model,
    parts: [{ type: "text", id: Ids.unsafe.part(`prt_u${n}`), text }],
  },
})

const started: Events.Event = { _tag: "SessionStarted", sessionId: Ids.unsafe.session(SESSION), at: 0, model }

/** Appends sealed events at the stream's head. */
const append = (events: ReadonlyArray<Events.Event>) =>
  Effect.gen(function* () {
    const head = yield* SessionLog.version(SESSION)
    yield* SessionLog.append(
      SESSION,
      head,
      events.map((event, i) => ({ id: `evt_${SESSION}_${head + i + 1}_${Math.random()}`, event })),
      { seal: true },
    )
  })

const bytesHold = (filename: string, word: string) =>
  ["", "-wal", "-shm"]
    .filter((s) => fs.existsSync(filename + s))
    .some((s) => fs.readFileSync(filename + s).includes(Buffer.from(word)))

describe("read models after a forget made by another store layer", () => {
  // A bare store deletes the key but not the read models' rows: their old pages stay in the file until SQLite next
  // checkpoints, so only the layer with the hooks (what `pivot forget` opens) is held to the file bytes.
  for (const [name, forgetter, bytes] of [
    ["with the read-model hooks (pivot forget)", (filename: string) => ReadModels.layerSqlite({ filename }), true],
    ["from a bare event store", (filename: string) => EventStore.layerSqlite({ filename }), false],
  ] as const)
    for (const snapshots of [false, { every: 2 }] as const)
      it(`given A holding the read models in memory (snapshots ${JSON.stringify(snapshots)}), when B forgets ${name} and A appends, then no read model holds the forgotten text`, async () => {
        const filename = path.join(dir, `${name.replace(/\W+/g, "-")}-${snapshots === false ? "none" : "every"}.db`)
        const a = ManagedRuntime.make(ReadModels.layerSqlite({ filename, snapshots }))
        try {
          await a.runPromise(
            Effect.gen(function* () {
              yield* append([started, user(1, `the word is ${SECRET}`), user(2, "more")])
              const window = yield* (yield* ReadModels.ReadModels).window(SESSION)
              expect(JSON.stringify(window)).toContain(SECRET) // the control: A's copies hold it
            }),
          )
          await Effect.runPromise(SessionLog.forget(SESSION).pipe(Effect.provide(forgetter(filename))))
          const after = await a.runPromise(
            Effect.gen(function* () {
              yield* append([user(3, "after the forget")])
              const readModels = yield* ReadModels.ReadModels
              return {
                tables: yield* readModels.tables(SESSION),
                window: yield* readModels.window(SESSION),
                recall: yield* readModels.recall(SESSION, SECRET, 10),
              }
            }),
          )
          expect(JSON.stringify(after)).not.toContain(SECRET)
          expect(after.window.map((m) => m.id)).toEqual(["msg_u1", "msg_u2", "msg_u3"])
          expect(JSON.stringify(after.window)).toContain(EventStore.ERASED)
          if (bytes) expect(bytesHold(filename, SECRET)).toBe(false)
        } finally {
          await a.dispose()
        }
      })
})
