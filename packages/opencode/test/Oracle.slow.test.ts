/**
 * The live oracle (slow lane): runs the real OpenCode binary (npm `opencode-ai`, pinned) offline against the scripted
 * model and compares every request it sends with pivot's window of the session's export. The captured fixtures
 * (`Oracle.test.ts`) are checked the same way in the fast lane; this test proves they still come from the binary.
 */
import { describe, expect, it } from "vitest"
import { capture } from "./oracle/capture.ts"
import {
  compactionsOf,
  fromChat,
  headEntries,
  matchRequests,
  parseSummariserInput,
  sameEntries,
  windowsOf,
} from "./oracle/compare.ts"
import * as ModelServer from "./oracle/model-server.ts"
import { contentText } from "./oracle/model-server.ts"
import * as OpenCode from "./oracle/opencode.ts"
import { autoCompaction, bigFile, kindOf, scriptedModel } from "./oracle/scenarios.ts"

describe("the real OpenCode 1.18.33, live", () => {
  it("given the auto-compaction scenario, then every agent request equals pivot's window and every summariser input pivot's head", async () => {
    const captured = await capture(autoCompaction)
    const { windows } = windowsOf(captured.exportText)
    const agent = captured.requests
      .filter((r) => r.kind === "agent")
      .map((r) => ({ index: r.index, messages: fromChat(r.body.messages) }))
    expect(agent.length).toBeGreaterThan(10)
    expect(matchRequests(agent, windows).filter((m) => m.version === undefined)).toEqual([])

    const summaries = captured.requests.filter((r) => r.kind === "summary")
    const compactions = compactionsOf(
      captured.exportText,
      { opencode: "1.18" },
      { context: autoCompaction.context, output: autoCompaction.output },
    )
    expect(compactions.length).toBeGreaterThanOrEqual(3)
    expect(summaries).toHaveLength(compactions.length)
    for (const [i, compaction] of compactions.entries()) {
      const user = summaries[i]!.body.messages.filter((m) => m.role !== "system")
      expect(user).toHaveLength(1)
      const input = parseSummariserInput(contentText(user[0]!))
      expect(sameEntries(input.entries, headEntries(compaction.head))).toBeUndefined()
      expect(compaction.pivotTail).toEqual(compaction.openCodeTail)
    }
  }, 600_000)

  it("given two `opencode run` turns (the CLI, not the server), then its requests equal pivot's window of its export", async () => {
    const scenario = { ...autoCompaction, files: { "a.txt": bigFile("a.txt", 8_000) }, turns: [] }
    const model: { respond: ModelServer.Responder } = { respond: () => ModelServer.answer({}) }
    const server = await ModelServer.start((request, index) => model.respond(request, index))
    const ws = OpenCode.workspace({
      baseURL: server.baseURL,
      context: 20_000,
      output: 4_000,
      files: scenario.files,
    })
    try {
      model.respond = scriptedModel(scenario, ws.repo)
      await OpenCode.turn(ws, "read a.txt")
      await OpenCode.turn(ws, "thanks", { continue: true })
      const exportText = await OpenCode.exportSession(ws, await OpenCode.latestSession(ws))
      const agent = server.requests
        .filter((r) => kindOf(r.body) === "agent")
        .map((r) => ({ index: r.index, messages: fromChat(r.body.messages) }))
      expect(agent.length).toBe(3)
      expect(matchRequests(agent, windowsOf(exportText).windows).filter((m) => m.version === undefined)).toEqual([])
    } finally {
      await server.close()
      ws.remove()
    }
  }, 600_000)
})
