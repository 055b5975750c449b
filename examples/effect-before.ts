// An Effect program calling the AI SDK, before pivot. examples/effect-after.ts is the same program on pivot's layer; a
// test checks that it changes at most 5 lines of this one.
import { generateText, stepCountIs } from "ai"
import { Effect } from "effect"
import { model, tools } from "./support/models.ts"

const call = { model, tools, stopWhen: stepCountIs(20) }
const task = "What does src/answer.ts export?"

const program = Effect.gen(function* () {
  const result = yield* Effect.promise(() => generateText({ ...call, prompt: task }))
  console.log(result.text)
})

await Effect.runPromise(program)
