// Forking a session: try another approach from the same context without touching the original. Runs offline.
import { createPivot } from "@pivot/ai"
import { generateText, stepCountIs } from "ai"
import { model, tools } from "./support/models.ts"

const pivot = await createPivot({ model, store: ":memory:", session: "fix-the-test" })
const settings = { model, tools, stopWhen: stepCountIs(5) }
await pivot.run("What does src/answer.ts export?", (turn) => generateText({ ...pivot.wrap(settings), ...turn }))

// #region fork
const before = await pivot.messages()
const attempt = await pivot.fork("fix-the-test, second attempt") // at: a version, default now
const inherited = await attempt.messages()
console.log(`the fork starts from the same window: ${JSON.stringify(inherited) === JSON.stringify(before)}`)

await attempt.run("Try a different fix.", (turn) => generateText({ ...attempt.wrap(settings), ...turn }))
console.log(`the original is unchanged: ${JSON.stringify(await pivot.messages()) === JSON.stringify(before)}`)
console.log(`the fork went on: ${(await attempt.messages()).length} messages, the original ${before.length}`)
// #endregion
await pivot.close()
