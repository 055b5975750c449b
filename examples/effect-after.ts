// The program of examples/effect-before.ts on pivot's layer: the session's turns recorded in ./data/pivot.db, the
// window compacted when the context fills up. Pivot.layer takes the same options as createPivot.
import { Pivot } from "@pivot/ai"
import { generateText, stepCountIs } from "ai"
import { Effect } from "effect"
import { model, tools } from "./support/models.ts"

const call = { model, tools, stopWhen: stepCountIs(20) }
const task = "What does src/answer.ts export?"

const program = Effect.gen(function* () {
  const chat = yield* Pivot.session("answer")
  const result = yield* Effect.promise(() => chat.run(task, (turn) => generateText(chat.wrap({ ...call, ...turn }))))
  console.log(result.text)
})

await Effect.runPromise(program.pipe(Effect.provide(Pivot.layer({ model, store: "./data/pivot.db" }))))
