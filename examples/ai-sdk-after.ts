// The agent of examples/ai-sdk-before.ts on pivot: every step recorded in ./data/pivot.db, the window compacted when
// the context fills up, the model's limits looked up in pivot's catalog.
import { createPivot } from "@pivot/ai"
import { stepCountIs, ToolLoopAgent } from "ai"
import { model, tools } from "./support/models.ts"

const pivot = await createPivot({ model, store: "./data/pivot.db", session: "answer" })
const agent = new ToolLoopAgent(pivot.wrap({ model, tools, stopWhen: stepCountIs(20) }))
const result = await pivot.run("What does src/answer.ts export?", (turn) => agent.generate(turn))
console.log(result.text)
await pivot.close()
