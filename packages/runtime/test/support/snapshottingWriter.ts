// A child process for the snapshot crash test: records a long generated session on a SQLite file through a handler
// that writes a snapshot after every event, printing "ack <version>" after each command and pausing, and
// "snapshot <version>" once a snapshot is committed, until it is killed.
import { Ids } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"
import { type Action, run as generate } from "../../../core/test/support/sessions.ts"

const [file] = process.argv.slice(2)
const actions: Array<Action> = []
for (let i = 0; i < 400; i++) {
  if (i % 25 === 24)
    actions.push({
      kind: "compact",
      auto: false,
      outcome: "finish",
      tailTurns: 2,
      preserve: undefined,
      autoContinue: false,
    })
  else if (i % 3 === 0) actions.push({ kind: "user", text: 200, image: false })
  else
    actions.push({
      kind: "step",
      tools: [{ tool: "read", size: 20_000, status: "completed" }],
      tokens: 2_000,
      finish: "tool-calls",
    })
}
const generated = generate(actions)

const program = Effect.gen(function* () {
  const sessions = yield* Sessions.Sessions
  for (const step of generated.steps) {
    const { state } = yield* sessions.execute("ses_generated", step.command)
    process.stdout.write(`ack ${state.session.version}\n`)
    // A pause as an agent's between its turns: the snapshot writer writes at a moment without appends (ADR 0024).
    yield* Effect.sleep(Sessions.SNAPSHOT_QUIET + 1)
  }
  // Everything recorded: keep the process alive until it is killed.
  yield* Effect.never
})

// The store, telling the test which snapshots it committed: the test checks the file holds at least the last one.
const reporting = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const store = yield* EventStore
    return EventStore.of({
      ...store,
      writeSnapshot: (stream, snapshot) =>
        store
          .writeSnapshot(stream, snapshot)
          .pipe(Effect.tap(() => Effect.sync(() => process.stdout.write(`snapshot ${snapshot.version}\n`)))),
    })
  }),
).pipe(Layer.provide(EventStore.layerSqlite({ filename: file!, synchronous: "normal" })))

await Effect.runPromise(
  program.pipe(
    Effect.provide(
      Sessions.Sessions.layer({ snapshots: { every: 1 } }).pipe(
        Layer.provide(Ids.Ids.layerSequential),
        Layer.provide(reporting),
      ),
    ),
  ),
)
