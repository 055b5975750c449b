// The zero-cost rules that clear tool inputs (docs/strategies.md): a write that a later read of the same file shows
// anyway (`superseded-writes`), and the input of a call that failed, one turn later (`errored-inputs`). Runs offline on
// the scripted model of examples/support/inputRulesModel.ts.
import { createPivot } from "@pivot/ai"
import { OpenCodeStrategy, PruneRules, Render, Strategy } from "@pivot/core"
import { stepCountIs, ToolLoopAgent } from "ai"
import { fresh } from "./support/fresh.ts"
import { makeInputRulesModel, NOTES, tools } from "./support/inputRulesModel.ts"

const model = makeInputRulesModel()
fresh("./data/input-rules.db") // each run starts from an empty store
// #region rules
const strategy = Strategy.withRules(OpenCodeStrategy.v1_18, PruneRules.supersededWrites, PruneRules.erroredInputs(1))
const pivot = await createPivot({
  model,
  store: "./data/input-rules.db",
  session: "input-rules",
  strategy,
  manager: { recall: true }, // placeholders name their recall id
})
// #endregion
const agent = new ToolLoopAgent(pivot.wrap({ model, tools, stopWhen: stepCountIs(6) }))

// #region turns
// After each turn pivot asks the strategy: the write goes at once (its read follows), the failed edit a turn later.
for (const question of ["Write the release notes, read them back and fix the heading.", "Anything else?"]) {
  await pivot.run(question, (turn) => agent.generate(turn))
  const window = JSON.stringify(await pivot.messages())
  const cleared = window.split("[Old tool input cleared — recall id:").length - 1
  console.log(
    `${strategy.name}: ${cleared} input(s) cleared, the notes read back in view: ${window.includes("keeps its public API")}`,
  )
}
// #endregion

// #region recall
// The placeholder names the id; context_recall with it answers the write's input as it was, byte for byte.
const id = /recall id: (prt_[0-9A-Za-z_-]+-input)\]/.exec(JSON.stringify(await pivot.messages()))![1]!
const recalled = await pivot.recall({ id })
console.log(
  `recalled ${id.replace(/prt_\w+-/, "prt_…-")}: ${recalled.text === JSON.stringify({ filePath: "NOTES.md", content: NOTES })}`,
)
console.log(Render.clearedInputText("prt_…-input"))
// #endregion

await pivot.close()
