// A projector process for the kill test (run with `node --conditions=@pivot/source projector.ts <file> <mode>`):
//   run    keep the async tally of the store up to date forever, printing `ack <checkpoint>` as it advances
//   final  catch up with the log, print the tally as JSON, and exit
import { Effect } from "effect"
import { Projections } from "../../src/index.ts"
import { tally } from "./support.ts"

const [file, mode] = process.argv.slice(2)
export const killed = Projections.async(tally("killed"))

const program = Effect.gen(function* () {
  const projections = yield* Projections.Projections
  if (mode === "final") {
    yield* projections.awaitCaughtUp
    console.log(JSON.stringify(yield* projections.get(killed)))
    return
  }
  console.log("started")
  while (true) {
    const [status] = yield* projections.status
    console.log(`ack ${status?.checkpoint ?? 0}`)
    yield* Effect.sleep("20 millis")
  }
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(
      Projections.layerSqlite({
        filename: file!,
        projections: [killed],
        // A stable name, as a restarted service has: the new life takes its lease back at once.
        projector: { owner: "projector", pollInterval: "5 millis", batchSize: 7 },
      }),
    ),
  ),
)
