// Projection plugins: read models of your own that pivot keeps up to date, stores beside the events and serves.
// Two across every session: the tokens pruned per tool, and a per-day cost summary. Three agent sessions are written
// through the ContextManager; the projections follow them (async: a checkpointed subscription), and `get` answers.
import * as Fs from "node:fs"
import { Ids, type Message, type Projection } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { Projections } from "@pivot/store"
import { Effect, Layer } from "effect"
import { fresh } from "./support/fresh.ts"

fresh("./data/projections.db") // each run starts from an empty store

// #region projections
/** Tool outputs pruned from the model input, per tool, across all sessions. */
interface PrunedPerTool {
  readonly tools: Readonly<Record<string, { readonly outputs: number; readonly tokens: number }>>
  /** The tool of each completed call not yet pruned (a pruned output names only its part). */
  readonly open: Readonly<Record<string, string>>
}

const prunedPerTool: Projection.Projection<PrunedPerTool> = {
  name: "pruned-per-tool",
  version: 1, // bump when evolve changes: the new version is built from the first event, then swapped in
  initial: { tools: {}, open: {} },
  evolve: (state, event) => {
    if (event._tag === "AssistantStepRecorded") {
      const calls = event.message.parts.filter((part): part is Message.ToolPart => part.type === "tool")
      if (calls.length === 0) return state
      return { ...state, open: { ...state.open, ...Object.fromEntries(calls.map((call) => [call.id, call.tool])) } }
    }
    if (event._tag !== "PartCompacted") return state // pure and total: ignore what you do not know
    const tool = state.open[event.partId] ?? "unknown"
    const { [event.partId]: _pruned, ...open } = state.open
    const before = state.tools[tool] ?? { outputs: 0, tokens: 0 }
    return {
      open,
      tools: { ...state.tools, [tool]: { outputs: before.outputs + 1, tokens: before.tokens + event.tokens } },
    }
  },
}

/** Model calls, tokens and dollars per day (UTC), at one price per million tokens. */
type CostPerDay = Readonly<Record<string, { readonly calls: number; readonly tokens: number; readonly usd: number }>>
const PRICE = { input: 1.25, output: 10, cacheRead: 0.125 } // $ per million tokens

const costPerDay: Projection.Projection<CostPerDay> = {
  name: "cost-per-day",
  version: 1,
  initial: {},
  evolve: (state, event) => {
    if (event._tag !== "AssistantStepRecorded") return state
    const day = new Date(event.at).toISOString().slice(0, 10)
    const { input, output, reasoning, cacheRead } = event.message.tokens // the call's usage, as normalised
    const tokens = input + output + reasoning + cacheRead
    const usd = (input * PRICE.input + (output + reasoning) * PRICE.output + cacheRead * PRICE.cacheRead) / 1e6
    const before = state[day] ?? { calls: 0, tokens: 0, usd: 0 }
    return { ...state, [day]: { calls: before.calls + 1, tokens: before.tokens + tokens, usd: before.usd + usd } }
  },
}
// #endregion

// #region layer
const perTool = Projections.async(prunedPerTool) // one state across sessions, behind the appends
const perDay = Projections.async(costPerDay)
const store = Projections.layerSqlite({ filename: "./data/projections.db", projections: [perTool, perDay] })
// #endregion

const layer = ContextManager.layer({
  model: { ref: { providerId: "local", modelId: "tiny" }, limits: { context: 24_000, output: 4_000 } },
  config: { prune: true },
  prune: { protect: 2_000, minimum: 1_000 }, // small thresholds, so these small sessions prune
}).pipe(Layer.provide(Ids.Ids.layer), Layer.provideMerge(store))

const tools = ["read", "bash", "grep"]
const program = Effect.gen(function* () {
  const pivot = yield* ContextManager
  for (let s = 0; s < 3; s++) {
    const sessionId = `ses_projections_${s}`
    for (let turn = 1; turn <= 4; turn++) {
      yield* pivot.recordUserMessage(sessionId, { text: `Step ${turn}` })
      yield* pivot.prepare(sessionId)
      const tool = tools[(s + turn) % tools.length]!
      yield* pivot.recordAssistantStep(sessionId, {
        parts: [
          {
            type: "tool",
            callId: `call_${turn}`,
            tool,
            state: { status: "completed", input: { turn }, output: `line ${turn}\n`.repeat(600) },
          },
        ],
        usage: { input: 2_000 * turn, output: 80, reasoning: 0, cacheRead: 1_000, cacheWrite: 0 },
        finish: "stop",
      })
      yield* pivot.prune(sessionId)
    }
  }
  // #region get
  const projections = yield* Projections.Projections
  yield* projections.awaitCaughtUp // async projections lag the appends; this waits for the log as it is now
  const pruned = yield* projections.get(perTool)
  for (const [tool, { outputs, tokens }] of Object.entries(pruned.tools))
    console.log(`${tool}: ${outputs} outputs pruned, ${tokens} tokens`)
  for (const [day, { calls, tokens, usd }] of Object.entries(yield* projections.get(perDay)))
    console.log(`${day}: ${calls} calls, ${tokens} tokens, $${usd.toFixed(4)}`)
  for (const status of yield* projections.status)
    console.log(`${status.name} v${status.version}: ${status.ready ? "ready" : "building"}, lag ${status.lag}`)
  // #endregion
})

Fs.mkdirSync("./data", { recursive: true })
await Effect.runPromise(program.pipe(Effect.provide(layer)))
