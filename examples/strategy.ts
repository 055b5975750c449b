// A context strategy of your own (docs/strategies.md): OpenCode 1.18's rules and a rule written here that clears every
// `read` output two turns old. Runs offline on the scripted model, which reads src/answer.ts in every turn.
import { createPivot } from "@pivot/ai"
import { OpenCodeStrategy, Strategy } from "@pivot/core"
import { stepCountIs, ToolLoopAgent } from "ai"
import { fresh } from "./support/fresh.ts"
import { makeModel, tools } from "./support/models.ts"

const model = makeModel({ callIds: "numbered" })
fresh("./data/strategy.db") // each run starts from an empty store
// #region strategy
// A rule answers the outputs to clear now, each with its name and a reason; pivot records both with the prune.
const oldReads: Strategy.Rule = {
  name: "old-reads",
  select: (input) =>
    Strategy.outputs(input.messages, { before: 2 }).flatMap((call) =>
      call.tool === "read" && call.part.state.status === "completed"
        ? [{ messageId: call.messageId, partId: call.partId, rule: "old-reads", reason: "a read two turns old" }]
        : [],
    ),
}
const strategy = Strategy.withRules(OpenCodeStrategy.v1_18, oldReads)
const pivot = await createPivot({ model, store: "./data/strategy.db", session: "strategy", strategy })
// #endregion
const agent = new ToolLoopAgent(pivot.wrap({ model, tools, stopWhen: stepCountIs(5) }))

// #region window
// After each turn pivot asks the strategy what to prune: from the third turn on, the read two turns old goes.
for (const question of ["What does src/answer.ts export?", "Check it again.", "And once more?"]) {
  await pivot.run(question, (turn) => agent.generate(turn))
  const window = JSON.stringify(await pivot.messages())
  const inView = window.split("export const answer = 41").length - 1
  const cleared = window.split("[Old tool result content cleared").length - 1
  console.log(`${strategy.name}: ${inView} read in view, ${cleared} cleared`)
}
// #endregion

await pivot.close()
