// A session that ends and is never continued, in the real OpenCode (npm opencode-ai 1.18.33): three turns, the first
// reading six large files, OpenCode titling the session from its first message and pruning the reads once the third
// turn ends (in the background, after the turn). Nothing runs in the session afterwards, yet the store must hold
// everything `opencode export` shows: the prune (as `PartCompacted`) and the generated title (the session's title as
// pivot folds it), exactly as `pivot import` of the export has them. And the HUD's estimate on the first call, before
// any usage came back, counts what OpenCode sends besides the messages: its system prompt and tool schemas.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Events, Tokens } from "@pivot/core"
import { Import } from "@pivot/opencode"
import * as Result from "effect/Result"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Recorder from "../src/Recorder.ts"
import { caughtUp } from "./support/Compare.ts"
import { fileText } from "./support/Files.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, type Reply, type ScriptedModel, start, textOf } from "./support/ScriptedModel.ts"

const FILES = 6
const TITLE = "Reading six scripted files"

describe("a session that is not continued, in the real OpenCode", () => {
  let model: ScriptedModel
  let server: OpenCode.Server
  let project: OpenCode.Project
  let session: string
  let imported: ReadonlyArray<Events.Event>
  let stored: ReadonlyArray<Events.Event>

  beforeAll(async () => {
    OpenCode.build()
    let dir = ""
    model = await start((request: Captured): Reply => {
      if (request.kind === "other") return { text: TITLE }
      const prompt = textOf([...request.body.messages].reverse().find((m) => m.role === "user") ?? { role: "user" })
      if (prompt.includes("read the six files") && request.body.messages.at(-1)!.role === "user")
        return {
          toolCalls: Array.from({ length: FILES }, (_, i) => ({
            name: "read",
            args: { filePath: Path.join(dir, `f${i + 1}.txt`) },
          })),
        }
      return { text: "Noted.", promptTokens: 70_000 }
    })
    // The HUD asked for (record mode has it off by default): its first estimate is checked below.
    project = OpenCode.project(model.port, { compaction: { prune: true } }, { hud: true })
    dir = project.dir
    for (let n = 1; n <= FILES; n++) Fs.writeFileSync(Path.join(dir, `f${n}.txt`), fileText(n))
    server = await OpenCode.serve(project)
    // No --title on the first turn: OpenCode generates one from the first message.
    const first = await OpenCode.opencode(project, [
      "run",
      "Please read the six files.",
      ...["-m", "scripted/model", "--format", "json", "--attach", server.url],
    ])
    session = OpenCode.sessionOf(first)
    await OpenCode.run(project, "Second turn, nothing to do.", session, server.url)
    await OpenCode.run(project, "Third turn, nothing to do.", session, server.url)
    // OpenCode prunes after the turn, in the background: wait until its storage shows it.
    const until = Date.now() + 60_000
    let exported: unknown
    for (;;) {
      exported = await OpenCode.exportSession(project, session)
      if (JSON.stringify(exported).includes('"compacted"') || Date.now() > until) break
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    const result = Import.importSession(exported)
    if (Result.isFailure(result)) throw result.failure
    imported = result.success.events
    const db = Path.join(dir, ".pivot/opencode.db")
    stored = await caughtUp(db, session, (e) => Recorder.IMPORTED.has(e._tag), imported.length)
  }, 600_000)

  afterAll(async () => {
    await server?.stop()
    await model?.close()
  })

  it("records the prune OpenCode runs after the last turn, though the session is never continued", () => {
    const prunes = (events: ReadonlyArray<Events.Event>) =>
      events.filter((e) => e._tag === "PartCompacted").map((e) => JSON.stringify(Events.encode(e)))
    expect(prunes(imported).length).toBeGreaterThan(0)
    expect(prunes(stored)).toEqual(prunes(imported))
    const encode = (e: Events.Event) => {
      const { title: _, ...rest } = e as Events.Event & { title?: string }
      return JSON.stringify(Events.encode(rest as Events.Event))
    }
    expect(stored.filter((e) => Recorder.IMPORTED.has(e._tag)).map(encode)).toEqual(imported.map(encode))
  })

  it("records the title OpenCode generates, so the live session's title is the import's", () => {
    const titleOf = (events: ReadonlyArray<Events.Event>) => events.reduce(Events.title, undefined)
    expect(titleOf(imported)).toBe(TITLE)
    expect(titleOf(stored)).toBe(TITLE)
  })
  it("estimates the first call's context with OpenCode's system prompt and tool schemas in it", () => {
    const request = model.requests.find((r) => r.kind === "agent")!
    const hud = request.body.messages
      .filter((m) => m.role === "system")
      .map(textOf)
      .join("\n")
    const shown = Number(/context: ([\d,]+) \//.exec(hud)![1]!.replaceAll(",", ""))
    // The reference: the request's own size, estimated as pivot estimates (4 characters a token).
    const sent = Tokens.estimate(JSON.stringify({ messages: request.body.messages, tools: request.body.tools }))
    expect(sent).toBeGreaterThan(1_000)
    expect(shown).toBeGreaterThan(sent * 0.8)
    expect(shown).toBeLessThan(sent * 1.25)
  })
})
