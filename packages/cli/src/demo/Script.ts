/**
 * What the scripted models answer. The session model plays the example's steps in order: each call answers the next
 * step of the current turn (its reasoning, text and tool calls). When the model refuses a call (its prompt is over the
 * context), the turn starts over: after the pivot the request is replayed with only the summary before it, so the
 * agent does its work again, reading what it needs anew. The compaction model answers
 * each summary request with the next canned summary; when there is none left it fails, and pivot's runtime writes
 * the extractive summary instead.
 */
import type { LanguageModelV4Content } from "@ai-sdk/provider"
import type { Example } from "./Example.ts"
import { summaryText, toolInput } from "./Example.ts"
import type { Reply } from "./ScriptedModel.ts"
import type { Outputs } from "./Tools.ts"

/** What the compaction model says when the example has no canned summary left. */
export const NO_SUMMARY_LEFT = "the example has no canned summary left"

/** The session model's script: the example's steps, turn by turn. */
export interface SessionScript {
  /** Starts playing turn `index` (0-based) from its first step. */
  readonly begin: (index: number) => void
  /** The answer to the next call. */
  readonly respond: () => Reply
  /** The model refused a call: the turn will be replayed from its first step. */
  readonly refused: () => void
}

/** The session script of `example`; each tool call it makes is announced to `outputs`. */
export const session = (example: Example, outputs: Outputs): SessionScript => {
  let turn = 0
  let step = 0
  let calls = 0
  return {
    begin: (index) => {
      turn = index
      step = 0
      outputs.turn = index
    },
    respond: () => {
      const next = example.turns[turn]?.steps[step]
      if (next === undefined)
        return { content: [{ type: "text", text: "(The script has no further step for this turn.)" }], finish: "stop" }
      step++
      const content: Array<LanguageModelV4Content> = []
      if (next.reasoning !== undefined) content.push({ type: "reasoning", text: next.reasoning })
      if (next.text !== undefined) content.push({ type: "text", text: next.text })
      for (const call of next.tools ?? []) {
        const toolCallId = `call_${String(++calls).padStart(4, "0")}`
        outputs.expect(toolCallId, call)
        content.push({
          type: "tool-call",
          toolCallId,
          toolName: call.tool,
          input: JSON.stringify(toolInput(call.input)),
        })
      }
      return { content, finish: (next.tools ?? []).length > 0 ? "tool-calls" : "stop" }
    },
    refused: () => {
      step = 0
    },
  }
}

/** The compaction model's script: the canned summaries in order, then a failure. */
export const summaries = (example: Example): (() => Reply) => {
  let used = 0
  return () => {
    const lines = example.summaries[used]
    if (lines === undefined) throw new Error(NO_SUMMARY_LEFT)
    used++
    return { content: [{ type: "text", text: summaryText(lines) }], finish: "stop" }
  }
}
