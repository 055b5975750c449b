// A child process of the fork race probe (scripts/bench/forks.ts, issue 32 defect 3), on one SQLite file through the read-model store, as
// `pivot fork` opens it. `fork <file> <parent> <child>`: waits for "go" on stdin, forks, prints {"ok":true} or
// {"error":"<tag>","message":…}. `write <file> <session> <millis>`: after "go", records user messages on its own
// session for that long, printing {"ok":<n>,"errors":[…]} at the end.
import { Ids } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { ReadModels } from "@pivot/store"
import { Clock, Deferred, Effect, Layer } from "effect"

const [mode, file, a, b] = process.argv.slice(2)

const go = Effect.gen(function* () {
  const ready = yield* Deferred.make<void>()
  process.stdin.once("data", () => Deferred.doneUnsafe(ready, Effect.void))
  process.stdout.write("ready\n")
  yield* Deferred.await(ready)
})

const forkOnce = Effect.gen(function* () {
  const sessions = yield* Sessions.Sessions
  yield* go
  const result = yield* Effect.result(sessions.fork(a!, b!))
  process.stdout.write(
    `${JSON.stringify(result._tag === "Success" ? { ok: true } : { error: result.failure._tag, message: result.failure.message })}\n`,
  )
})

const write = Effect.gen(function* () {
  const sessions = yield* Sessions.Sessions
  const session = a!
  yield* sessions.execute(session, { _tag: "StartSession", sessionId: Ids.unsafe.session(session), at: 0 })
  yield* go
  const until = (yield* Clock.currentTimeMillis) + Number(b)
  let ok = 0
  const errors: Array<string> = []
  for (let n = 0; (yield* Clock.currentTimeMillis) < until; n++) {
    const result = yield* Effect.result(
      sessions.execute(session, {
        _tag: "AddUserMessage",
        message: {
          role: "user",
          id: Ids.unsafe.message(`msg_w${String(n).padStart(6, "0")}`),
          createdAt: n,
          parts: [{ type: "text", id: Ids.unsafe.part(`prt_w${String(n).padStart(6, "0")}`), text: `message ${n}` }],
        },
      }),
    )
    if (result._tag === "Success") ok++
    else errors.push(`${result.failure._tag}: ${result.failure.message}`)
  }
  process.stdout.write(`${JSON.stringify({ ok, errors })}\n`)
})

await Effect.runPromise(
  (mode === "fork" ? forkOnce : write).pipe(
    Effect.provide(
      Sessions.Sessions.layer().pipe(
        Layer.provide(Ids.Ids.layer),
        Layer.provide(ReadModels.layerSqlite({ filename: file! })),
      ),
    ),
  ),
)
process.exit(0)
