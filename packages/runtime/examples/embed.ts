// pivot embedded in a plain Effect agent loop, with no AI SDK: your loop calls your model; pivot records each turn,
// prepares the next model input (compacting when the context is full) and prunes after each turn. The "model" here is
// a function that answers with a big tool output and reports usage as the size of the prompt it was given.
//
//   node packages/runtime/examples/embed.ts
import { Ids, Projection, type Render, Tokens } from "@pivot/core"
import { ContextManager, type Plugins, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"

const model = { ref: { providerId: "local", modelId: "tiny-coder" }, limits: { context: 24_000, output: 4_000 } }

// Your model call. It gets the rendered window (AI SDK-shaped messages) and reports its usage.
const callModel = (input: ReadonlyArray<Render.Rendered>, turn: number) => {
  const promptTokens = Tokens.estimate(JSON.stringify(input.map((r) => r.message)))
  return {
    text: `Read the file for request ${turn}.`,
    toolOutput: `line of src/module${turn}.ts\n`.repeat(600),
    usage: { ...Tokens.zero, input: promptTokens, output: 60 },
  }
}

// A projection plugin: adds a line of project context to every compaction prompt.
const projectNotes: Plugins.Plugin = {
  name: "project-notes",
  compactionContext: () => ({ context: ["The project is built with `npm run build`; never edit dist/."] }),
}

// A custom read model: a pure fold over the session's events (here, how many tool outputs were recorded).
const toolOutputs: Projection.Projection<number> = {
  name: "tool-outputs",
  version: 1,
  initial: 0,
  evolve: (count, event) =>
    event._tag === "AssistantStepRecorded"
      ? count + event.message.parts.filter((p) => p.type === "tool").length
      : count,
}

/** Runs nine turns; answers what happened. */
export const program: Effect.Effect<ReadonlyArray<string>, unknown, ContextManager | Sessions.Sessions> = Effect.gen(
  function* () {
    const pivot = yield* ContextManager
    const sessionId = "ses_embedded"
    yield* pivot.start(sessionId)
    const lines: Array<string> = []
    for (let turn = 1; turn <= 9; turn++) {
      yield* pivot.recordUserMessage(sessionId, { text: `Request ${turn}: look at src/module${turn}.ts` })
      const prepared = yield* pivot.prepare(sessionId) // compacts first when the context is full
      const answer = callModel(prepared.messages, turn)
      yield* pivot.recordAssistantStep(sessionId, {
        parts: [
          { type: "text", text: answer.text },
          {
            type: "tool",
            callId: `call_${turn}`,
            tool: "read",
            state: { status: "completed", input: { filePath: `src/module${turn}.ts` }, output: answer.toolOutput },
          },
        ],
        usage: answer.usage,
        finish: "stop",
      })
      yield* pivot.prune(sessionId)
      const usage = yield* pivot.usage(sessionId)
      lines.push(
        `turn ${turn}: ${usage.tokens} tokens (${usage.percent}% of ${usage.usable}), ${usage.pivots} pivot(s)`,
      )
    }
    // Audit: replay the log through a custom projection.
    const sessions = yield* Sessions.Sessions
    const events = yield* sessions.events(sessionId)
    const outputs = Projection.fold(toolOutputs, Projection.withMeta(events))
    lines.push(`events: ${events.length}, tool outputs recorded: ${outputs}`)
    return lines
  },
)

/** The layers: the context manager over an in-memory store (use `EventStore.layerSqlite` to keep sessions). */
export const layer = ContextManager.layer({ model, config: { prune: true }, plugins: [projectNotes] }).pipe(
  Layer.provide(Ids.Ids.layer),
  Layer.provideMerge(EventStore.layerMemory()),
)

if (import.meta.main) {
  for (const line of await Effect.runPromise(program.pipe(Effect.provide(layer)))) console.log(line)
}
