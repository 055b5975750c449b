// A writer process for the read-model crash test (run with `node writer.ts <file> <seed>`; Node 24 runs TypeScript).
// It appends real core events, one Decider command's batch at a time, through SessionLog and the inline read models,
// session after session, printing `ack <session> <version>` after each acknowledged append, until it is killed.

import { Effect } from "effect"
import fc from "fast-check"
import { actionArb, run } from "../../../../core/test/support/sessions.ts"
import { ReadModels, SessionLog } from "../../../src/index.ts"

const [file, seedText] = process.argv.slice(2)
const seed = Number(seedText)

/** The same long script for every session (a session id differs, the events do not). */
const script = run(fc.sample(fc.array(actionArb, { minLength: 300, maxLength: 300 }), { numRuns: 1, seed })[0]!)
const batches = script.steps.map((step) => step.events).filter((events) => events.length > 0)

const program = Effect.gen(function* () {
  for (let k = 0; ; k++) {
    const sessionId = `ses_crash${k}`
    let version = yield* SessionLog.version(sessionId)
    // Batches are atomic, so the stored version always ends one of them: resume with the next.
    let done = 0
    let index = 0
    while (done < version) done += batches[index++]!.length
    if (done !== version) throw new Error(`${sessionId}: version ${version} splits a batch`)
    for (; index < batches.length; index++) {
      const entries = batches[index]!.map((event, i) => ({ id: SessionLog.eventId(sessionId, version + i + 1), event }))
      version = (yield* SessionLog.append(sessionId, version, entries)).streamVersion
      process.stdout.write(`ack ${sessionId} ${version}\n`)
    }
  }
}).pipe(Effect.provide(ReadModels.layerSqlite({ filename: file! })))

Effect.runPromise(program).catch((error) => {
  process.stderr.write(`writer failed: ${error}\n`)
  process.exit(1)
})
