// An AI SDK agent before pivot: a ToolLoopAgent answering one request. examples/ai-sdk-after.ts is the same agent on
// pivot; a test checks that it changes at most 5 lines of this one.
import { stepCountIs, ToolLoopAgent } from "ai"
import { model, tools } from "./support/models.ts"

const agent = new ToolLoopAgent({ model, tools, stopWhen: stepCountIs(20) })
const result = await agent.generate({ prompt: "What does src/answer.ts export?" })
console.log(result.text)
