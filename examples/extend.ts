// Extending pivot: a read model of your own (a projection: a pure fold over a session's events) and a plugin that
// takes part in compaction. Both are plain values handed to the code that uses them.
import { Ids, Projection, Tokens } from "@pivot/core"
import { ContextManager, type Plugins, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer } from "effect"

// #region projection
/** The tool outputs pruned so far, and the tokens that freed. */
const pruned: Projection.Projection<{ readonly outputs: number; readonly tokens: number }> = {
  name: "pruned",
  version: 1, // bump when evolve changes, so stored copies are rebuilt
  initial: { outputs: 0, tokens: 0 },
  evolve: (state, event) =>
    event._tag === "PartCompacted" ? { outputs: state.outputs + 1, tokens: state.tokens + event.tokens } : state, // pure and total: ignore what you do not know (later versions add events)
}
// #endregion

// #region plugin
const projectNotes: Plugins.Plugin = {
  name: "project-notes",
  compactionContext: () => ({ context: ["The project is built with `npm run build`; never edit dist/."] }),
  autoContinue: ({ midTask }) => ({ enabled: midTask }),
}
// #endregion

const layer = ContextManager.layer({
  model: { ref: { providerId: "local", modelId: "tiny" }, limits: { context: 24_000, output: 4_000 } },
  config: { prune: true },
  prune: { protect: 2_000, minimum: 1_000 }, // small thresholds, so this small session prunes
  plugins: [projectNotes],
}).pipe(Layer.provide(Ids.Ids.layer), Layer.provideMerge(EventStore.layerMemory()))

const program = Effect.gen(function* () {
  const pivot = yield* ContextManager
  const sessionId = "ses_extend"
  for (let turn = 1; turn <= 4; turn++) {
    yield* pivot.recordUserMessage(sessionId, { text: `Read file ${turn}` })
    yield* pivot.prepare(sessionId)
    const output = `line ${turn}\n`.repeat(800)
    yield* pivot.recordAssistantStep(sessionId, {
      parts: [{ type: "tool", callId: `c${turn}`, tool: "read", state: { status: "completed", input: {}, output } }],
      usage: { ...Tokens.zero, input: 1_000 * turn },
      finish: "stop",
    })
    yield* pivot.prune(sessionId)
  }
  // #region fold
  const events = yield* (yield* Sessions.Sessions).events(sessionId)
  const { outputs, tokens } = Projection.fold(pruned, Projection.withMeta(events))
  // #endregion
  console.log(`${outputs} tool outputs pruned, ${tokens} tokens freed`)
})

await Effect.runPromise(program.pipe(Effect.provide(layer)))
