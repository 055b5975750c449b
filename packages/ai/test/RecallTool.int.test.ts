// The `context_recall` tool end to end with a scripted model on a real SQLite file: the agent works until a prune,
// reads the recall id from the placeholder it is sent, calls the tool, and receives the exact original bytes; the same
// tool from an Effect program (`RecallTool.make`).
import * as Path from "node:path"
import { Tokens } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { jsonSchema, stepCountIs, ToolLoopAgent, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { createPivot, Pivot, RecallTool } from "../src/index.ts"
import { answer, scriptedAgent, tempDirs, toolCall } from "./support/Mock.ts"

const LIMITS = { context: 100_000, output: 8_000 }
const ORIGINAL = `export const answer = 41\r\n\t// trailing  \n😀 é\n${"const filler = 0\n".repeat(120)}`

const tempDir = tempDirs("pivot-recall-tool-")
const tempFile = () => Path.join(tempDir(), "pivot.db")

const readTool = tool({
  description: "Read a file",
  inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
  execute: async () => ORIGINAL,
})

/** The tool results a prompt carries, by tool name, in order. */
const toolResults = (prompt: unknown): Array<{ readonly toolName: string; readonly value: unknown }> => {
  const out: Array<{ toolName: string; value: unknown }> = []
  for (const message of prompt as ReadonlyArray<{ role: string; content: unknown }>)
    if (message.role === "tool")
      for (const part of message.content as ReadonlyArray<{ toolName: string; output: { value: unknown } }>)
        out.push({ toolName: part.toolName, value: part.output.value })
  return out
}

/**
 * A model that reads a file on the first turn, chats on the next ones, and on the turn asked "recall" calls
 * `context_recall` with the id it finds in the placeholder it was sent. It keeps every prompt it got.
 */
const agentModel = () =>
  scriptedAgent((prompt, calls) => {
    const results = toolResults(prompt)
    const asked = JSON.stringify(prompt.at(-1))
    if (calls === 1) return toolCall("c1", "read", { path: "src/a.ts" })
    if (asked.includes("recall it") && results.at(-1)?.toolName !== "context_recall") {
      const id = /recall id: (prt_[0-9A-Za-z_-]+)\]/.exec(JSON.stringify(prompt))?.[1]
      return toolCall("c2", "context_recall", { id: id ?? "none" })
    }
    return answer([{ type: "text", text: `answer ${calls}` }], "stop")
  })

describe("context_recall through createPivot and a ToolLoopAgent", () => {
  it("works until a prune, calls context_recall with the placeholder's id, and receives the exact original bytes", async () => {
    const file = tempFile()
    const { model, prompts } = agentModel()
    const pivot = await createPivot({
      model,
      store: file,
      limits: LIMITS,
      config: { prune: true },
      manager: { recall: true, prune: { protect: 10, minimum: 10 } },
    })
    try {
      const agent = new ToolLoopAgent(
        pivot.wrap({
          model,
          tools: { read: readTool, [RecallTool.NAME]: RecallTool.tool(pivot) },
          stopWhen: stepCountIs(5),
        }),
      )
      for (const text of ["read src/a.ts", "turn 2", "turn 3", "turn 4"])
        await pivot.run(text, (turn) => agent.generate(turn))
      // The read output was pruned at the end of a turn: the model is now sent the placeholder with its id.
      const before = await pivot.messages()
      const placeholder = JSON.stringify(before).match(/\[Old tool result content cleared — recall id: (prt_[^\]]+)\]/)
      expect(placeholder).not.toBeNull()
      expect(JSON.stringify(before)).not.toContain("const filler")

      await pivot.run("recall it", (turn) => agent.generate(turn))
      const afterRecall = prompts.at(-1)
      const recalled = toolResults(afterRecall).filter((r) => r.toolName === "context_recall")
      expect(recalled).toHaveLength(1)
      expect(recalled[0]!.value).toBe(ORIGINAL)
      expect(Buffer.from(String(recalled[0]!.value)).equals(Buffer.from(ORIGINAL))).toBe(true)
    } finally {
      await pivot.close()
    }
    // The audit: the recall is an event with the id the placeholder named, next to the step that called the tool.
    const events = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        return yield* store.read(`session-${pivot.sessionId}`)
      }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
    )
    const recalls = events.filter((e) => e.type === "ContextRecalled").map((e) => e.data as Record<string, unknown>)
    expect(recalls).toHaveLength(1)
    expect(recalls[0]).toMatchObject({ found: [recalls[0]!.id], chars: ORIGINAL.length, truncated: false })
  })

  it("from an Effect program, RecallTool.make answers as the handle's recall does; bad input is a tool result", async () => {
    const program = Effect.gen(function* () {
      const session = yield* Pivot.session("effect")
      const cm = yield* ContextManager
      yield* cm.recordUserMessage(session.sessionId, { text: "go" })
      yield* cm.recordAssistantStep(session.sessionId, {
        parts: [
          {
            type: "tool",
            callId: "c1",
            tool: "read",
            state: { status: "completed", input: {}, output: ORIGINAL },
          },
        ],
        usage: { ...Tokens.zero, input: 100, output: 1 },
        finish: "tool-calls",
      })
      for (const n of [1, 2, 3]) {
        yield* cm.recordUserMessage(session.sessionId, { text: `turn ${n}` })
        yield* cm.recordAssistantStep(session.sessionId, {
          parts: [{ type: "text", text: "ok" }],
          usage: { ...Tokens.zero, input: 100 + n, output: 1 },
          finish: "stop",
        })
      }
      yield* cm.prune(session.sessionId)
      const prepared = yield* cm.prepare(session.sessionId)
      const id = /recall id: (prt_[^\]]+)\]/.exec(JSON.stringify(prepared.modelMessages))![1]!
      const recallTool = yield* RecallTool.make(session.sessionId)
      const call = (input: RecallTool.Input) =>
        Effect.promise(
          async () =>
            recallTool.execute!(input, { toolCallId: "t", messages: [], context: undefined }) as Promise<string>,
        )
      return {
        byTool: yield* call({ id }),
        byHandle: yield* Effect.promise(() => session.recall({ id })),
        bad: yield* call({ id: "nope" }),
      }
    })
    const out = await Effect.runPromise(
      program.pipe(
        Effect.provide(
          Pivot.layer({
            model: new MockLanguageModelV4({ provider: "test", modelId: "scripted" }),
            store: ":memory:",
            limits: LIMITS,
            summarizer: false,
            config: { prune: true },
            manager: { recall: true, prune: { protect: 10, minimum: 10 } },
          }),
        ),
      ),
    )
    expect(out.byTool).toBe(ORIGINAL)
    expect(out.byHandle.text).toBe(ORIGINAL)
    expect(out.bad).toBe(
      `Invalid context_recall input: "nope" is not a recall id. Pass {"id": "prt_…"} (from a placeholder, a search result or a pivot's list), {"query": "words to search for"}, or {"pivot": 2} (none: the latest) to list what a pivot summarised.`,
    )
  })
})
