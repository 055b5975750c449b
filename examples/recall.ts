// context_recall: the model gets back the exact original of a tool output pivot pruned, by the id the placeholder
// names, or searches what was pruned and summarised. Runs offline on a scripted model (examples/support/recallModel.ts).
import { createPivot, RecallTool } from "@pivot/ai"
import { stepCountIs, ToolLoopAgent } from "ai"
import { fresh } from "./support/fresh.ts"
import { BUILD_LOG, makeRecallModel, tools } from "./support/recallModel.ts"

const model = makeRecallModel()
fresh("./data/recall.db") // each run starts from an empty store
// #region setup
const pivot = await createPivot({
  model,
  store: "./data/recall.db",
  session: "recall-demo",
  config: { prune: true }, // prune old tool outputs at the end of each turn (OpenCode's `prune`)
  manager: {
    recall: { maxChars: 20_000 }, // placeholders name their recall id; an answer is cut at 20,000 characters
    prune: { protect: 1_000, minimum: 1_000 }, // small thresholds, so this short demo prunes
  },
})
const agent = new ToolLoopAgent(
  pivot.wrap({ model, tools: { ...tools, [RecallTool.NAME]: RecallTool.tool(pivot) }, stopWhen: stepCountIs(10) }),
)
// #endregion

for (const question of ["Read the build log", "Thanks", "Go on"])
  console.log((await pivot.run(question, (turn) => agent.generate(turn))).text)

// #region placeholder
// The log was pruned at the end of a turn: the model now sees a placeholder that names its recall id.
const window = JSON.stringify(await pivot.messages())
console.log(/\[Old tool result content cleared — recall id: prt_\w+\]/.exec(window)?.[0].replace(/prt_\w+/, "prt_…"))
// #endregion

// #region recall
// Asked about the log again, the model calls context_recall with that id and reads the original, byte for byte.
const answer = await pivot.run("What exactly did the failing test print?", (turn) => agent.generate(turn))
console.log(answer.text)
const recalled = answer.steps[0]?.toolResults.find((r) => r.toolName === RecallTool.NAME)?.output
console.log(`recalled the original exactly: ${recalled === BUILD_LOG}`)
// #endregion

// #region search
// Your own code can recall too (the tool calls this): a query returns ranked snippets with their ids.
const found = await pivot.recall({ query: "FAIL timeout" })
console.log(found.text.replace(/prt_\w+/g, "prt_…"))
// #endregion

await pivot.close()
