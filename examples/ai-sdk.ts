// pivot with the AI SDK, beyond the five-line adoption: your own hooks composed with pivot's, streamText, a
// hand-written loop, several sessions, the summariser and its warnings. Runs offline on scripted models.
import { createPivot } from "@pivot/ai"
import { generateText, stepCountIs, streamText, ToolLoopAgent } from "ai"
import { fresh } from "./support/fresh.ts"
import { makeModel, model, tools } from "./support/models.ts"

fresh("./data/pivot.db") // each run starts from an empty store

// #region create
const pivot = await createPivot({
  model, // its limits come from pivot's catalog by model id (here openai/gpt-5)…
  limits: { context: 400_000, input: 272_000, output: 128_000 }, // …unless given
  store: "./data/pivot.db", // SQLite; the folder is created. ":memory:" keeps nothing
  session: "fix-the-test", // any name; the same name finds the same session again
  summarizer: makeModel(), // the model that writes summaries (default: `model`); false: extractive only
  onWarning: (message) => console.log(`warning: ${message}`), // default console.warn
})
// #endregion

// #region compose
const steps: Array<string> = []
const agent = new ToolLoopAgent(
  pivot.wrap({
    model,
    tools,
    stopWhen: stepCountIs(20),
    // Yours run after pivot's: prepareStep sees pivot's window in `messages`, and what it returns wins.
    prepareStep: ({ stepNumber, messages }) => {
      steps.push(`step ${stepNumber}: ${messages.length} messages`)
      return {}
    },
    onStepEnd: (step) => void steps.push(`ended: ${step.finishReason}`),
    onEnd: (event) => void steps.push(`done: ${event.text}`),
  }),
)
const result = await pivot.run("What does src/answer.ts export?", (turn) => agent.generate(turn))
// #endregion
console.log(result.text)
console.log(steps.join("\n"))

// #region stream
const streamed = await pivot.run("And what does it mean?", async (turn) => {
  const stream = streamText(pivot.wrap({ model, tools, stopWhen: stepCountIs(20), ...turn }))
  // Pipe it to your client; wait for its end before `run` returns (a mid-stream overflow shows only then).
  await stream.consumeStream()
  return stream
})
// #endregion
console.log(await streamed.text)

// #region own-loop
const other = pivot.session("a hand-written loop") // another session in the same store
await other.user("What does src/answer.ts export?")
const messages = await other.messages() // a fresh ModelMessage[]: yours to send (or extend)
const step = await generateText({ model, tools, messages })
await other.record(step) // usage as the SDK gives it; tool calls and results included
console.log(`${other.sessionId}: ${(await other.usage()).tokens} tokens in the context`)
// #endregion

await pivot.close()
