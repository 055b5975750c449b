// Drive mode in the real OpenCode (npm opencode-ai 1.18.33) with pivot's own prune named in opencode.json, driven by
// a scripted model over loopback: the plugin's `strategy` option as a strategy value (`{ name, ttl }`: a one-second
// cache lifetime, so the cache counts as cold at the calls these turns make, without waiting out five minutes) and
// its `rules` option naming `duplicate-calls`. A file is read, read again in the next turn, then a third turn. Checked:
// the plugin cleared the older read itself, recorded as `duplicate-calls` with its reason; every agent request
// OpenCode sent equals pivot's window at some version of the store, in order; the last one carries the older read as
// pivot's placeholder naming its recall id and the newer one whole; OpenCode's own storage was not changed (the
// imported events are exactly the import of `opencode export`).
import * as Path from "node:path"
import { Events, Render } from "@pivot/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { drivenVersions, storedEvents } from "./support/Compare.ts"
import { comparable, recorded, storeOf } from "./support/Exported.ts"
import { files } from "./support/Files.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, lastUserText, type Reply, type ScriptedModel } from "./support/ScriptedModel.ts"

// The tool results since the request's last user message: which step of the turn this is.
const stepOf = (request: Captured): number => {
  const messages = request.body.messages
  const from = messages.findLastIndex((m) => m.role === "user")
  return messages.slice(from + 1).filter((m) => m.role === "tool").length
}

const script =
  (dir: string) =>
  (request: Captured): Reply => {
    if (request.kind !== "agent") return { text: "Reads" }
    if (lastUserText(request).includes("read f1"))
      return stepOf(request) === 0
        ? { toolCalls: [{ name: "read", args: { filePath: Path.join(dir, "f1.txt") } }] }
        : { text: "Read it." }
    return { text: "Noted." }
  }

interface ExportedPart {
  readonly id: string
  readonly tool?: string
  readonly state?: { readonly output?: string }
}

describe("drive mode in the real OpenCode, with pivot's strategy and duplicate-calls named in opencode.json", () => {
  let oc: OpenCode.Running
  let model: ScriptedModel
  let project: OpenCode.Project
  let session: string
  let reads: ReadonlyArray<ExportedPart>

  const db = () => storeOf(project)
  const agentCalls = () => model.requests.filter((r) => r.kind === "agent")

  beforeAll(async () => {
    oc = await OpenCode.running({
      script: (request, { dir }) => script(dir)(request),
      plugin: { drive: true, hud: false, strategy: { name: "quick-cold", ttl: 1_000 }, rules: ["duplicate-calls"] },
      files: files(1),
    })
    ;({ model, project } = oc)
    session = OpenCode.sessionOf(await oc.turn("Please read f1."))
    await oc.turn("Please read f1 again.", session)
    // Past the strategy's one-second lifetime: the next call finds the cache cold.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    await oc.turn("Third turn, nothing to do.", session)
    const exported = (await OpenCode.exportSession(project, session)) as {
      messages: Array<{ parts: Array<ExportedPart> }>
    }
    reads = exported.messages.flatMap((m) => m.parts).filter((p) => p.tool === "read")
  }, 900_000)

  afterAll(() => oc?.stop())

  it("cleared the older read itself, recorded as duplicate-calls with its reason", async () => {
    expect(reads).toHaveLength(2)
    const cleared = (await storedEvents(db(), session)).flatMap((e) => (e._tag === "PartCompacted" ? [e] : []))
    expect(cleared.map((e) => [e.partId, e.rule])).toEqual([[reads[0]!.id, "duplicate-calls"]])
    expect(cleared[0]!.reason).toBe(`same read call as ${reads[1]!.id}, whose output is newer`)
  })

  it("sent, at every agent call, pivot's window at a version of the store, in order", async () => {
    const calls = agentCalls()
    expect(calls.length).toBeGreaterThanOrEqual(5)
    const versions = drivenVersions(await storedEvents(db(), session), calls)
    for (const [i] of calls.entries())
      expect(versions[i], `agent call ${i}: no stored version has its window`).toBeDefined()
  })

  it("sent the older read as pivot's placeholder with its recall id, and the newer one whole", () => {
    const last = JSON.stringify(agentCalls().at(-1)!.body.messages)
    expect(last).toContain(Render.clearedText(reads[0]!.id))
    // A word of f1.txt: in the newer read's output only.
    const word = /w1x[0-9a-z]+/.exec(reads[1]!.state!.output!)![0]
    expect(last.split(word).length - 1).toBe(1)
  })

  it("left OpenCode's storage alone: the imported events are exactly the import of its export", async () => {
    const { imported, stored } = await recorded(project, session)
    expect(stored.map(comparable)).toEqual(imported.map(comparable))
    expect(JSON.stringify(imported.map((e) => Events.encode(e)))).not.toContain("recall id: prt_")
    expect(reads[0]!.state!.output).toContain(/w1x[0-9a-z]+/.exec(reads[1]!.state!.output!)![0])
  })
})
