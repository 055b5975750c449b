// A writer process for the reliability tests (run with `node writer.ts ...`; Node 24 runs TypeScript directly).
//
//   crash <file> <tag> <seed>            append batches of 1–5 events forever, printing `ack <version> <batch> <size>`
//                                        after each acknowledged append (the parent kills it with SIGKILL)
//   race sqlite <file> <tag> <n>         after a line on stdin, append n batches with read-then-append-exact and retry
//   race pg <url> <schema> <tag> <n>     on conflict; print a JSON summary { acked, conflicts } at the end
//   crash-pg <url> <schema> <tag> <seed> the same on PostgreSQL
//   subscribe sqlite <file> <checkpoint>  subscribe from the checkpoint file's position, handle each event (see
//   subscribe pg <url>#<schema> <cp>      `subscribe` below) and print `ack <position>`; runs until killed
//   open <tag>                           for each file name read on stdin: open it (typically new), append one
//                                        event, close it, and print `opened` or `failed <error>`

import * as fs from "node:fs"
import * as readline from "node:readline"
import { Effect, type Layer, Stream } from "effect"
import { EventStore, type NewEvent, type ReadError } from "../../src/index.ts"

const STREAM = "session-shared"
const [mode, ...args] = process.argv.slice(2)

// A small deterministic generator, so a failing run can be replayed from its seed.
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const batch = (id: string, size: number): Array<NewEvent> =>
  Array.from({ length: size }, (_, k) => ({
    id: `${id}-${k}`,
    type: "Written",
    version: 1,
    data: { batch: id, size, k, pad: "x".repeat(300) },
  }))

const crash = (layer: Layer.Layer<EventStore, ReadError>, tag: string, seed: number) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const next = random(seed)
    let version = yield* store.streamVersion(STREAM)
    for (let n = 0; ; n++) {
      const size = 1 + Math.floor(next() * 5)
      const id = `${tag}-${n}`
      const result = yield* store.append(STREAM, version, batch(id, size))
      version = result.streamVersion
      // Pipes are written synchronously on Linux: once this returns, the parent will read the line.
      process.stdout.write(`ack ${version} ${id} ${size}\n`)
    }
  }).pipe(Effect.provide(layer))

/**
 * Subscribes after the position in `checkpointFile` and, for each event, replaces the file (write, then rename:
 * atomic) with the new position and the ids handled so far, then prints `ack <position>`. Handling and checkpoint are
 * one write, so a kill at any point leaves them consistent.
 */
const subscribe = (layer: Layer.Layer<EventStore, ReadError>, checkpointFile: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const saved = fs.existsSync(checkpointFile)
      ? (JSON.parse(fs.readFileSync(checkpointFile, "utf8")) as { position: number; ids: Array<string> })
      : { position: 0, ids: [] }
    let checkpoint = saved
    process.stdout.write("subscribed\n")
    yield* Stream.runForEach(store.subscribe({ after: saved.position }), (event) =>
      Effect.sync(() => {
        checkpoint = { position: event.position, ids: [...checkpoint.ids, event.id] }
        fs.writeFileSync(`${checkpointFile}.tmp`, JSON.stringify(checkpoint))
        fs.renameSync(`${checkpointFile}.tmp`, checkpointFile)
        process.stdout.write(`ack ${event.position}\n`)
      }),
    )
  }).pipe(Effect.provide(layer))

const waitForGo = Effect.promise(
  () =>
    new Promise<void>((resolve) => {
      const lines = readline.createInterface({ input: process.stdin })
      lines.once("line", () => {
        lines.close()
        resolve()
      })
    }),
)

const race = (layer: Layer.Layer<EventStore, ReadError>, tag: string, count: number) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    yield* store.streamVersion(STREAM) // connected and migrated before the start signal
    process.stdout.write("ready\n")
    yield* waitForGo
    const acked: Array<{ readonly id: string; readonly from: number; readonly to: number }> = []
    let conflicts = 0
    for (let n = 0; n < count; n++) {
      const id = `${tag}-${n}`
      const size = 1 + (n % 3)
      for (;;) {
        const version = yield* store.streamVersion(STREAM)
        // A command handler folds and decides between reading and appending; give the other writer that window.
        yield* Effect.sleep(n % 2)
        const result = yield* Effect.result(store.append(STREAM, version, batch(id, size)))
        if (result._tag === "Success") {
          acked.push({ id, from: version + 1, to: result.success.streamVersion })
          break
        }
        if (result.failure._tag !== "WrongExpectedVersion") return yield* result.failure
        conflicts++
      }
    }
    process.stdout.write(`${JSON.stringify({ acked, conflicts })}\n`)
  }).pipe(Effect.provide(layer))

const openEach = (tag: string) =>
  Effect.promise(async () => {
    const lines = readline.createInterface({ input: process.stdin })
    let round = 0
    for await (const file of lines) {
      const opened = Effect.gen(function* () {
        const store = yield* EventStore
        yield* store.append(STREAM, "any", batch(`${tag}-${round++}`, 1))
      }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file })))
      const exit = await Effect.runPromiseExit(opened)
      process.stdout.write(exit._tag === "Success" ? "opened\n" : `failed ${String(exit.cause)}\n`)
    }
  })

const storeOf = (backend: string, target: string): Layer.Layer<EventStore, ReadError> =>
  backend === "sqlite"
    ? EventStore.layerSqlite({ filename: target, pollInterval: "20 millis" })
    : EventStore.layerPostgres({
        url: target.split("#")[0]!,
        schema: target.split("#")[1]!,
        pollInterval: "200 millis",
      })

const program =
  mode === "open"
    ? openEach(args[0]!)
    : mode === "crash"
      ? crash(EventStore.layerSqlite({ filename: args[0]! }), args[1]!, Number(args[2]))
      : mode === "crash-pg"
        ? crash(EventStore.layerPostgres({ url: args[0]!, schema: args[1]! }), args[2]!, Number(args[3]))
        : mode === "subscribe"
          ? subscribe(storeOf(args[0]!, args[1]!), args[2]!)
          : mode === "race" && args[0] === "sqlite"
            ? race(EventStore.layerSqlite({ filename: args[1]! }), args[2]!, Number(args[3]))
            : mode === "race" && args[0] === "pg"
              ? race(EventStore.layerPostgres({ url: args[1]!, schema: args[2]! }), args[3]!, Number(args[4]))
              : Effect.die(new Error(`usage: writer.ts crash|race ... (got ${process.argv.slice(2).join(" ")})`))

Effect.runPromise(program).catch((error) => {
  process.stderr.write(`writer failed: ${error}\n`)
  process.exit(1)
})
