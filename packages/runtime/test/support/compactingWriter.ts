// A child process for the SIGKILL test: an agent turn on a SQLite store whose step fills the context, then `prepare`
// with a summariser that never answers. Once the compaction's start is in the file it prints "ack" and the event types
// stored, again and again, until it is killed.
import { Ids } from "@pivot/core"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { layer, SESSION, services, stub, tool, used } from "./harness.ts"

const [file] = process.argv.slice(2)
const program = Effect.gen(function* () {
  const { cm, sessions } = yield* services
  yield* cm.recordUserMessage(SESSION, { text: "refactor src/store.ts" })
  yield* cm.recordAssistantStep(SESSION, {
    parts: [tool("read", { filePath: "src/store.ts" }, "export {}")],
    usage: used(90_000),
    finish: "tool-calls",
  })
  yield* Effect.forkChild(cm.prepare(SESSION))
  for (;;) {
    const tags = (yield* sessions.events(SESSION)).map((event) => event._tag)
    if (tags.includes("CompactionStarted")) process.stdout.write(`ack ${tags.join(" ")}\n`)
    yield* Effect.sleep("2 millis")
  }
})
await Effect.runPromise(
  program.pipe(
    Effect.provide(
      layer({
        ids: Ids.Ids.layer,
        store: EventStore.layerSqlite({ filename: file! }),
        summarizer: stub(() => Effect.never),
      }),
    ),
  ),
)
