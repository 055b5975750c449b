// pivot in your own agent loop, with any model client: the ContextManager layer records each turn, prepares the next
// model input (compacting first when the context is full) and prunes old tool outputs. "Your model" here is a
// function that reads a big file each turn and reports usage as the size of the prompt it was given.
import { Ids, Prune, type Render, Tokens } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"
import { fresh } from "./support/fresh.ts"

fresh("pivot.db") // each run starts from an empty store

// #region layer
const layer = ContextManager.layer({
  model: { ref: { providerId: "local", modelId: "tiny-coder" }, limits: { context: 24_000, output: 4_000 } },
  config: { prune: true }, // OpenCode's keys: auto, prune, reserved, tail_turns, preserve_recent_tokens, …
  prune: Prune.sized(24_000), // thresholds for this window (OpenCode's fixed 40k / 20k would never act in 24k)
  plugins: [], // compaction plugins (prompt lines, continue veto, redaction), see docs/extend.md
}).pipe(
  Layer.provide(Ids.Ids.layer),
  Layer.provideMerge(EventStore.layerSqlite({ filename: "pivot.db" })), // or layerMemory(), layerPostgres
)
// #endregion

// Your model call: it gets the rendered window and answers with text, a tool call and its usage.
const callYourModel = (input: ReadonlyArray<Render.Rendered>, turn: number) =>
  Effect.succeed({
    text: `Read src/module${turn}.ts.`,
    output: `line of src/module${turn}.ts\n`.repeat(600),
    usage: { ...Tokens.zero, input: Tokens.estimate(JSON.stringify(input)), output: 60 },
  })

const program = Effect.gen(function* () {
  // #region turn
  const pivot = yield* ContextManager
  const sessionId = "ses_embedded"
  yield* pivot.start(sessionId)
  for (let turn = 1; turn <= 9; turn++) {
    yield* pivot.recordUserMessage(sessionId, { text: `Look at src/module${turn}.ts` })
    // Settles a pending compaction and runs the overflow pre-check; `prepared.next` is "call", "wait" or "stop".
    const prepared = yield* pivot.prepare(sessionId)
    const answer = yield* callYourModel(prepared.messages, turn)
    yield* pivot.recordAssistantStep(sessionId, {
      parts: [
        { type: "text", text: answer.text },
        {
          type: "tool",
          callId: `call_${turn}`,
          tool: "read",
          state: { status: "completed", input: { path: `src/module${turn}.ts` }, output: answer.output },
        },
      ],
      usage: answer.usage, // when it fills the usable window, the next `prepare` compacts
      finish: "stop",
    })
    yield* pivot.prune(sessionId) // after the turn; acts only when config.prune is true
    const usage = yield* pivot.usage(sessionId) // tokens, percent of the usable window, status, pivots
    console.log(`turn ${turn}: ${usage.tokens} tokens, ${usage.percent}% of ${usage.usable}, ${usage.pivots} pivots`)
  }
  // #endregion
})

await Effect.runPromise(program.pipe(Effect.provide(layer)))
