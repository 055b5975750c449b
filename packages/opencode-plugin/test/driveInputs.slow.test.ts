// Drive mode in the real OpenCode (npm opencode-ai 1.18.33) with tool inputs pivot cleared (ADR 0030), driven by a
// scripted model over loopback: a file written and read back, then an edit that fails (its oldString is not in the
// file). pivot's zero-cost rules `superseded-writes` and `errored-inputs(0)` are then applied to the plugin's store
// from this process, as pivot's runtime applies a strategy (`ContextManager.prune`), and two more turns follow, one of
// them recalling the write's input by the id its placeholder names. Checked: every agent request OpenCode sent equals
// pivot's window at some version of the store, in order; after the rules, the requests carry the two inputs as pivot's
// placeholders and not their long values; the recall gave the original input back byte for byte; OpenCode's own
// storage was not changed (the imported events are exactly the import of `opencode export`).
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Events, Ids, PruneRules, Render, Strategy } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { ReadModels } from "@pivot/store"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fromRequest, storedEvents, windows } from "./support/Compare.ts"
import { comparable, recorded, storeOf } from "./support/Exported.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, lastUserText, type Reply, type ScriptedModel } from "./support/ScriptedModel.ts"

const CONTENT = "export const answer = 42 // the notes the agent wrote\n".repeat(30)
const MISSING = "this text is not in the file\n".repeat(12)

// The tool results since the request's last user message: which step of the turn this is.
const stepOf = (request: Captured): number => {
  const messages = request.body.messages
  const from = messages.findLastIndex((m) => m.role === "user")
  return messages.slice(from + 1).filter((m) => m.role === "tool").length
}

const argsOf = (request: Captured) =>
  request.body.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => JSON.parse(c.function.arguments) as unknown))

const script =
  (file: () => string) =>
  (request: Captured): Reply => {
    if (request.kind !== "agent") return { text: "Notes" }
    const prompt = lastUserText(request)
    const step = stepOf(request)
    if (prompt.includes("write the notes")) {
      if (step === 0) return { toolCalls: [{ name: "write", args: { filePath: file(), content: CONTENT } }] }
      if (step === 1) return { toolCalls: [{ name: "read", args: { filePath: file() } }] }
      if (step === 2)
        return { toolCalls: [{ name: "edit", args: { filePath: file(), oldString: MISSING, newString: "x" } }] }
      return { text: "Written, read back; the edit did not apply." }
    }
    if (prompt.includes("recall")) {
      if (step > 0) return { text: "Recalled it." }
      const id = JSON.stringify(argsOf(request))
        .match(/recall id: (prt_[0-9A-Za-z_-]+-input)\]/)
        ?.at(1)
      return { toolCalls: [{ name: "context_recall", args: { id: id ?? "none" } }] }
    }
    return { text: "Noted." }
  }

// pivot's rules applied to the plugin's store, as the runtime applies a strategy after a step.
const applyRules = async (file: string, sessionId: string) => {
  const strategy = Strategy.withRules({ name: "zero-cost" }, PruneRules.supersededWrites, PruneRules.erroredInputs(0))
  const runtime = ManagedRuntime.make(
    ContextManager.layer({
      model: { ref: { providerId: "scripted", modelId: "scripted" }, limits: { context: 200_000, output: 4_000 } },
      strategy,
    }).pipe(Layer.provide(Ids.Ids.layer), Layer.provideMerge(ReadModels.layerSqlite({ filename: file }))),
  )
  try {
    return await runtime.runPromise(Effect.flatMap(ContextManager, (cm) => cm.prune(sessionId)))
  } finally {
    await runtime.dispose()
  }
}

describe("drive mode in the real OpenCode, with tool inputs pivot cleared", () => {
  let oc: OpenCode.Running
  let model: ScriptedModel
  let project: OpenCode.Project
  let session: string
  let pruned: { readonly parts: number; readonly tokens: number }
  let afterRules = 0

  const db = () => storeOf(project)
  const notes = () => Path.join(project.dir, "notes.txt")

  beforeAll(async () => {
    oc = await OpenCode.running({ script: (request) => script(notes)(request), plugin: { drive: true, hud: false } })
    ;({ model, project } = oc)
    const turn = oc.turn
    session = OpenCode.sessionOf(await turn("Please write the notes and read them back."))
    // The store holds the turn once the plugin synced it: its last step, the answer after the failed edit.
    for (let tries = 0; tries < 120; tries++) {
      const events = await storedEvents(db(), session)
      if (JSON.stringify(events).includes("the edit did not apply")) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    pruned = await applyRules(db(), session)
    afterRules = model.requests.length
    await turn("Second turn, nothing to do.", session)
    await turn("Please recall the notes you wrote by the id of their placeholder.", session)
  }, 900_000)

  afterAll(() => oc?.stop())

  const agentCalls = () => model.requests.filter((r) => r.kind === "agent")

  it("cleared the write's and the failed edit's inputs, each recorded with its rule and target input", async () => {
    expect(pruned.parts).toBe(2)
    const events = await storedEvents(db(), session)
    const cleared = events.filter((e) => e._tag === "PartCompacted" && e.target === "input")
    expect(cleared.map((e) => e._tag === "PartCompacted" && e.rule)).toEqual(["superseded-writes", "errored-inputs"])
  })

  it("sent, at every agent call, pivot's window at a version of the store, in order", async () => {
    const byVersion = windows(await storedEvents(db(), session), { recallIds: true }).map(
      ([v, items]) => [v, JSON.stringify(items)] as const,
    )
    let previous = 0
    const calls = agentCalls()
    expect(calls.length).toBeGreaterThanOrEqual(7)
    for (const [i, request] of calls.entries()) {
      const sent = JSON.stringify(fromRequest(request.body.messages))
      const version = byVersion.find(([v, window]) => v >= previous && window === sent)?.[0]
      expect(version, `agent call ${i}: no stored version has its window`).toBeDefined()
      previous = version!
    }
  })

  it("after the rules, the requests carry the placeholders and not the long values; before, the originals", () => {
    const before = model.requests.slice(0, afterRules).filter((r) => r.kind === "agent")
    const after = model.requests.slice(afterRules).filter((r) => r.kind === "agent")
    expect(after.length).toBeGreaterThan(0)
    for (const request of after) {
      const args = JSON.stringify(argsOf(request))
      expect(args).not.toContain("the notes the agent wrote")
      expect(args).not.toContain("this text is not in the file")
      expect(args.match(/\[Old tool input cleared — recall id: prt_[0-9A-Za-z_-]+-input\]/g)?.length).toBe(2)
      // The read's output and the edit's error are still in view.
      expect(JSON.stringify(request.body.messages)).toContain("export const answer = 42")
    }
    expect(JSON.stringify(argsOf(before.at(-1)!))).toContain("this text is not in the file")
  })

  it("answered the recall by the placeholder's id with the original input, byte for byte", async () => {
    const exported = (await OpenCode.exportSession(project, session)) as {
      messages: Array<{ parts: Array<{ id: string; tool?: string; state?: { input?: unknown; output?: string } }> }>
    }
    const parts = exported.messages.flatMap((m) => m.parts)
    const recall = parts.find((p) => p.tool === "context_recall")!
    const id = (recall.state!.input as { id: string }).id
    const write = parts.find((p) => p.id === Render.partOfInputRecallId(id))!
    expect(write.tool).toBe("write")
    expect(recall.state!.output).toBe(JSON.stringify(write.state!.input))
    expect(JSON.parse(recall.state!.output!)).toEqual({ filePath: notes(), content: CONTENT })
  })

  it("left OpenCode's storage alone: the imported events are exactly the import of its export", async () => {
    const { imported, stored } = await recorded(project, session)
    expect(stored.map(comparable)).toEqual(imported.map(comparable))
    expect(JSON.stringify(imported.map((e) => Events.encode(e)))).not.toContain("tool input cleared")
    expect(Fs.readFileSync(notes(), "utf8")).toBe(CONTENT)
  })
})
