// Drive mode in the real OpenCode (npm opencode-ai 1.18.33), driven by a scripted model over loopback: six large reads,
// two small turns (OpenCode then prunes the reads), a recall by the id the placeholder names, a turn whose usage fills
// the context (OpenCode compacts, its summariser's history passing through the plugin too), a turn killed (SIGKILL)
// while a call is on the wire, and `--continue` in a new OpenCode. Checked: every agent request OpenCode sent equals
// pivot's window at some version of the store (rendered with the recall ids drive mode sends), in order; the pruned
// outputs reached the model as pivot's placeholders; the recall by id gave the exact bytes back; OpenCode's own storage
// was not changed (the store is exactly the import of `opencode export`).
import * as Path from "node:path"
import { Events, Render } from "@pivot/core"
import { Hud } from "@pivot/runtime"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { drivenVersions, storedEvents } from "./support/Compare.ts"
import { comparable, recorded, storeOf } from "./support/Exported.ts"
import { files } from "./support/Files.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { conversation, lastUser } from "./support/Requests.ts"
import { type Captured, type Reply, type ScriptedModel, textOf } from "./support/ScriptedModel.ts"

const FILES = 6

const script =
  (dir: string) =>
  (request: Captured): Reply => {
    if (request.kind === "summary")
      return { text: "## Goal\nRead six files.\n\n## Progress\nAll read.", promptTokens: 5_000 }
    if (request.kind === "other") return { text: "Six files" }
    const prompt = lastUser(request)
    const after = conversation(request).at(-1)!
    if (prompt.includes("read the six files"))
      return after.role === "user"
        ? {
            toolCalls: Array.from({ length: FILES }, (_, i) => ({
              name: "read",
              args: { filePath: Path.join(dir, `f${i + 1}.txt`) },
            })),
          }
        : { text: "I read all six.", promptTokens: 80_000 }
    if (prompt.includes("recall")) {
      if (after.role === "user") {
        // The id comes from the placeholder drive mode put in the cleared output.
        const placeholder = request.body.messages.map(textOf).find((t) => Render.recallIdOf(t) !== undefined)
        return { toolCalls: [{ name: "context_recall", args: { id: Render.recallIdOf(placeholder ?? "") ?? "none" } }] }
      }
      return { text: "Recalled it.", promptTokens: 30_000 }
    }
    if (prompt.includes("fill the context")) return { text: "The context is full now.", promptTokens: 199_000 }
    if (prompt.includes("read f2 again"))
      return after.role === "user"
        ? { toolCalls: [{ name: "read", args: { filePath: Path.join(dir, "f2.txt") } }] }
        : { text: "Read it again.", promptTokens: 20_000 }
    if (prompt.startsWith("Continue if you have next steps")) return { text: "Nothing left.", promptTokens: 6_000 }
    return { text: "Noted.", promptTokens: 81_000 }
  }

describe("drive mode in the real OpenCode", () => {
  let oc: OpenCode.Running
  let model: ScriptedModel
  let project: OpenCode.Project
  let session: string

  beforeAll(async () => {
    oc = await OpenCode.running({
      script: (request, { dir }) => script(dir)(request),
      config: { compaction: { prune: true } },
      plugin: { drive: true },
      files: files(FILES),
    })
    ;({ model, project } = oc)
    const turn = oc.turn
    session = OpenCode.sessionOf(await turn("Please read the six files."))
    await turn("Second turn, nothing to do.", session)
    await turn("Third turn, nothing to do.", session)
    await turn("Please recall one of the cleared files by its id.", session)
    await turn("Now fill the context.", session)
    // Killed while the call after the tool's output is on the wire.
    const dying = oc.server
    model.onRequest = (request) => {
      if (request.kind === "agent" && conversation(request).at(-1)!.role === "tool" && lastUser(request).includes("f2"))
        dying.kill()
    }
    await OpenCode.opencode(project, OpenCode.turnArgs("Please read f2 again.", { session, attach: dying.url }))
    await dying.stop()
    model.onRequest = undefined
    const server = await oc.restart()
    await OpenCode.opencode(
      project,
      OpenCode.turnArgs("The last turn, nothing to do.", { continue: true, attach: server.url }),
    )
  }, 1_500_000)

  afterAll(() => oc?.stop())

  const db = () => storeOf(project)
  const agentCalls = () => model.requests.filter((r) => r.kind === "agent")

  it("sent, at every agent call, pivot's window at a version of the store, in order", async () => {
    // The HUD is each request's last message (drive's default), the newest HudShown at that version.
    const calls = agentCalls()
    expect(calls.length).toBeGreaterThan(8)
    const versions = drivenVersions(await storedEvents(db(), session), calls)
    for (const [i, request] of calls.entries()) {
      expect(versions[i], `agent call ${i}: no stored version has its window`).toBeDefined()
      // The HUD at the end, where the cached prefix survives it; none in the system prompt.
      expect(textOf(request.body.messages.at(-1)!).startsWith(Hud.HEADER), `agent call ${i}: HUD last`).toBe(true)
      const system = request.body.messages.filter((m) => m.role === "system").map(textOf)
      expect(system.some((t) => t.includes(Hud.HEADER))).toBe(false)
    }
    // The summariser's history carries no HUD.
    for (const request of model.requests.filter((r) => r.kind === "summary"))
      expect(JSON.stringify(request.body.messages)).not.toContain(Hud.HEADER)
    // The prune reached the model as pivot's placeholders, with their recall ids.
    const placeholders = calls
      .flatMap((r) => r.body.messages.map(textOf))
      .filter((t) => Render.recallIdOf(t) !== undefined)
    expect(placeholders.length).toBeGreaterThan(0)
    expect(calls.some((r) => JSON.stringify(r.body.messages).includes(`"${Render.CLEARED_TEXT}"`))).toBe(false)
  })

  it("answered the recall by the placeholder's id with the exact original", async () => {
    const exported = (await OpenCode.exportSession(project, session)) as {
      messages: Array<{
        parts: Array<{ id: string; tool?: string; state?: { input?: { id?: string }; output?: string } }>
      }>
    }
    const parts = exported.messages.flatMap((m) => m.parts)
    const recall = parts.find((p) => p.tool === "context_recall")!
    const original = parts.find((p) => p.id === recall.state!.input!.id)!
    expect(original.tool).toBe("read")
    expect(recall.state!.output!.replace(/\n\[Recall truncated: [^\]]*\]$/, "")).toBe(
      original.state!.output!.slice(0, recall.state!.output!.replace(/\n\[Recall truncated: [^\]]*\]$/, "").length),
    )
    expect(recall.state!.output!.length).toBeGreaterThan(1_000)
  })

  it("left OpenCode's storage alone: the store is exactly the import of its export", async () => {
    const { imported, stored } = await recorded(project, session)
    expect(stored.map(comparable)).toEqual(imported.map(comparable))
    // OpenCode's own records keep the outputs and its own prune marks: nothing of pivot's placeholders in them.
    expect(JSON.stringify(imported.map((e) => Events.encode(e)))).not.toContain("recall id: prt_")
  })
})
