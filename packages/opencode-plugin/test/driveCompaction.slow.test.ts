// Compaction under drive mode in the real OpenCode (npm opencode-ai 1.18.33), driven by a scripted model over loopback:
// pivot's strategy (cache-aware: compact at 75% of the usable window) asks OpenCode to compact (`driveCompaction`)
// after a turn whose usage reached 150,000 tokens of the 196,000 OpenCode would wait for. OpenCode compacts once the
// next call has ended (the turn was in progress: the agent goes on), its summariser with pivot's prompt; then a recall
// by id of a read the summary replaced, and `--continue` in a new OpenCode. Checked: every agent request equals pivot's
// window at some version, in order; one compaction, recorded once as a pivot; no call reached OpenCode's own limit;
// the recall gave the exact bytes back; OpenCode's storage is exactly what the store imported; pivot's request was
// recorded once (`CompactionRequestedByStrategy`), linked to the marker of the compaction, and changes no window.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Events, Prompt, Tokens } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { Hud } from "@pivot/runtime"
import * as Result from "effect/Result"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Recorder from "../src/Recorder.ts"
import { caughtUp, drivenVersions, storedEvents, windows } from "./support/Compare.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { conversation, isSummariser, lastUser } from "./support/Requests.ts"
import { type Captured, type Reply, type ScriptedModel, start } from "./support/ScriptedModel.ts"

/**
 * OpenCode's own limit for the scripted model (context 200,000, output 4,000) and 75% of it: cache-aware's trigger is
 * 75% of the room above the fixed prompt (ADR 0034), so at or above this.
 */
const USABLE = 196_000
const TRIGGER = 147_000

/** A small file of distinct words (its read fits one recall answer whole). */
const small = (n: number) =>
  `${Array.from({ length: 40 }, (_, line) => `file ${n} line ${line}: ${(n * 7919 + line * 104729).toString(36)}`).join("\n")}\n`

const script =
  (dir: string) =>
  (request: Captured): Reply => {
    if (request.kind === "summary")
      return { text: "## Goal\nRead two files.\n\n## Progress\nRead.", promptTokens: 5_000 }
    if (request.kind === "other") return { text: "Two files" }
    const prompt = lastUser(request)
    const after = conversation(request).at(-1)!
    const read = (n: number) => ({ name: "read", args: { filePath: Path.join(dir, `f${n}.txt`) } })
    if (prompt.includes("read the two files"))
      return after.role === "user" ? { toolCalls: [read(1), read(2)] } : { text: "Read both.", promptTokens: 20_000 }
    // Over pivot's trigger, under OpenCode's limit.
    if (prompt.includes("Second turn")) return { text: "Noted.", promptTokens: 150_000 }
    if (prompt.includes("read f2 again"))
      return after.role === "user" ? { toolCalls: [read(2)] } : { text: "Read it again.", promptTokens: 30_000 }
    if (prompt.startsWith("Continue if you have next steps")) return { text: "Read it again.", promptTokens: 30_000 }
    const id = /prt_[A-Za-z0-9]+/.exec(prompt)?.[0]
    if (id !== undefined)
      return after.role === "user"
        ? { toolCalls: [{ name: "context_recall", args: { id } }] }
        : { text: "Recalled it.", promptTokens: 31_000 }
    return { text: "Noted.", promptTokens: 32_000 }
  }

interface ExportedPart {
  readonly id: string
  readonly tool?: string
  readonly state?: { readonly input?: { readonly id?: string; readonly filePath?: string }; readonly output?: string }
}

describe("compaction under drive mode in the real OpenCode", () => {
  let model: ScriptedModel
  let project: OpenCode.Project
  let session: string
  let server: OpenCode.Server
  let continued: OpenCode.Ran

  const exportedParts = async () =>
    (
      (await OpenCode.exportSession(project, session)) as { messages: Array<{ parts: Array<ExportedPart> }> }
    ).messages.flatMap((m) => m.parts)

  beforeAll(async () => {
    OpenCode.build()
    let dir = ""
    model = await start((request) => script(dir)(request), process.env.PIVOT_DUMP_REQUESTS)
    project = OpenCode.project(model.port, {}, { drive: true, strategy: "cache-aware", driveCompaction: true })
    dir = project.dir
    for (const n of [1, 2]) Fs.writeFileSync(Path.join(dir, `f${n}.txt`), small(n))
    server = await OpenCode.serve(project)
    const turn = (message: string, id?: string) => OpenCode.run(project, message, id, server.url)
    session = OpenCode.sessionOf(await turn("Please read the two files."))
    await turn("Second turn, nothing to do.", session)
    await turn("Please read f2 again.", session)
    // A read the summary replaced, recalled by its id.
    const first = (await exportedParts()).find((p) => p.tool === "read" && p.state?.input?.filePath?.endsWith("f1.txt"))
    await turn(`Please recall ${first!.id} word for word.`, session)
    await server.stop()
    server = await OpenCode.serve(project)
    continued = await OpenCode.opencode(
      project,
      OpenCode.turnArgs("The last turn, nothing to do.", { continue: true, attach: server.url }),
    )
  }, 1_500_000)

  afterAll(async () => {
    await server?.stop()
    await model?.close()
  })

  const db = () => Path.join(project.dir, ".pivot/opencode.db")
  const agentCalls = () => model.requests.filter((r) => r.kind === "agent")

  it("compacted once, asked by pivot before any call reached OpenCode's own limit, recorded once as a pivot", async () => {
    const stored = await storedEvents(db(), session)
    const steps = stored.flatMap((e) =>
      e._tag === "AssistantStepRecorded" && e.message.summary !== true ? [Tokens.contextCount(e.message.tokens)] : [],
    )
    // OpenCode alone would not have compacted: no call reached its limit; one reached pivot's trigger.
    expect(Math.max(...steps)).toBeLessThan(USABLE)
    expect(steps.some((t) => t >= TRIGGER)).toBe(true)
    expect(model.requests.filter(isSummariser)).toHaveLength(1)
    expect(stored.filter((e) => e._tag === "CompactionRequested")).toHaveLength(1)
    expect(stored.filter((e) => e._tag === "SummaryFinished")).toHaveLength(1)
    // The summariser got pivot's prompt, and its history carries no HUD.
    const summary = model.requests.find(isSummariser)!
    expect(JSON.stringify(summary.body.messages)).toContain(JSON.stringify(Prompt.anchor()).slice(1, -1))
    expect(JSON.stringify(summary.body.messages)).not.toContain(Hud.HEADER)
    // OpenCode compacted right after the call during which pivot asked (the turn's first), before any other call.
    const asking = model.requests.findIndex((r) => r.kind === "agent" && lastUser(r).includes("read f2 again"))
    expect(isSummariser(model.requests[asking + 1]!)).toBe(true)
    // The turn was in progress: the agent went on after the summary.
    expect(agentCalls().some((r) => lastUser(r).startsWith("Continue if you have next steps"))).toBe(true)
    expect(continued.status).toBe(0)
  })

  it("recorded pivot's request once, linked to the compaction's marker, with why and what it measured", async () => {
    const stored = await storedEvents(db(), session)
    const asked = stored.filter((e) => e._tag === "CompactionRequestedByStrategy")
    expect(asked).toHaveLength(1)
    const request = asked[0]!
    const marker = stored.find((e) => e._tag === "CompactionRequested")
    if (request._tag !== "CompactionRequestedByStrategy" || marker?._tag !== "CompactionRequested")
      throw new Error("no request or no marker")
    expect(request).toMatchObject({ markerId: marker.marker.id, reason: "threshold", usable: USABLE })
    expect(request.strategy).toMatch(/^cache-aware/)
    expect(request.tokens).toBeGreaterThanOrEqual(TRIGGER)
    expect(request.tokens).toBeLessThan(USABLE)
    expect(request.trigger).toBeLessThanOrEqual(request.tokens)
    expect(request.at).toBeLessThanOrEqual(marker.marker.createdAt)
    // Recorded after the marker it names; the window is the same at every version with it as without it.
    expect(stored.indexOf(request)).toBeGreaterThan(stored.indexOf(marker))
    const at = stored.indexOf(request)
    const without = windows(stored.filter((e) => e !== request)).map(([, w]) => JSON.stringify(w))
    const withIt = windows(stored)
      .filter((_, i) => i !== at)
      .map(([, w]) => JSON.stringify(w))
    expect(withIt).toEqual(without)
  })

  it("sent, at every agent call, pivot's window at a version of the store, in order", async () => {
    const calls = agentCalls()
    expect(calls.length).toBeGreaterThan(7)
    for (const [i, version] of drivenVersions(await storedEvents(db(), session), calls).entries())
      expect(version, `agent call ${i}: no stored version has its window`).toBeDefined()
  })

  it("answered the recall of a summarised read with its exact bytes", async () => {
    const parts = await exportedParts()
    const recall = parts.find((p) => p.tool === "context_recall")!
    const original = parts.find((p) => p.id === recall.state!.input!.id)!
    expect(original.state!.output!.length).toBeGreaterThan(1_000)
    expect(recall.state!.output).toContain(original.state!.output!)
  })

  it("left OpenCode's storage alone: the store is exactly the import of its export", async () => {
    const imported = Import.importSession(await OpenCode.exportSession(project, session))
    if (Result.isFailure(imported)) throw imported.failure
    const isImported = Recorder.isImported
    const stored = (await caughtUp(db(), session, isImported, imported.success.events.length)).filter(isImported)
    const encode = (e: Events.Event) => {
      const { title: _, ...rest } = e as Events.Event & { title?: string }
      return JSON.stringify(Events.encode(rest as Events.Event))
    }
    expect(stored.map(encode)).toEqual(imported.success.events.map(encode))
  })
})
