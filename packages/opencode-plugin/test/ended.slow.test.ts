// A session that ends and is never continued, in the real OpenCode (npm opencode-ai 1.18.33): three turns, the first
// reading six large files, OpenCode titling the session from its first message and pruning the reads once the third
// turn ends (in the background, after the turn). Nothing runs in the session afterwards, yet the store must hold
// everything `opencode export` shows: the prune (as `PartCompacted`) and the generated title (the session's title as
// pivot folds it), exactly as `pivot import` of the export has them. And the HUD's estimate on the first call, before
// any usage came back, counts what OpenCode sends besides the messages: its system prompt and tool schemas.
import * as Path from "node:path"
import { Events, Tokens } from "@pivot/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { comparable, importerKinds, recorded } from "./support/Exported.ts"
import { files } from "./support/Files.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, lastUserText, type Reply, type ScriptedModel, textOf } from "./support/ScriptedModel.ts"

const FILES = 6
const TITLE = "Reading six scripted files"

describe("a session that is not continued, in the real OpenCode", () => {
  let oc: OpenCode.Running
  let model: ScriptedModel
  let project: OpenCode.Project
  let session: string
  let imported: ReadonlyArray<Events.Event>
  let stored: ReadonlyArray<Events.Event>
  let all: ReadonlyArray<Events.Event>

  beforeAll(async () => {
    const script = (request: Captured, { dir }: OpenCode.Project): Reply => {
      if (request.kind === "other") return { text: TITLE }
      const prompt = lastUserText(request)
      if (prompt.includes("read the six files") && request.body.messages.at(-1)!.role === "user")
        return {
          toolCalls: Array.from({ length: FILES }, (_, i) => ({
            name: "read",
            args: { filePath: Path.join(dir, `f${i + 1}.txt`) },
          })),
        }
      return { text: "Noted.", promptTokens: 70_000 }
    }
    // The HUD asked for (record mode has it off by default): its first estimate is checked below.
    oc = await OpenCode.running({
      script,
      config: { compaction: { prune: true } },
      plugin: { hud: true },
      files: files(FILES),
    })
    ;({ model, project } = oc)
    const server = oc.server
    // No --title on the first turn: OpenCode generates one from the first message.
    const first = await OpenCode.opencode(
      project,
      OpenCode.turnArgs("Please read the six files.", { attach: server.url, args: ["--format", "json"] }),
    )
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
    ;({ imported, stored, all } = await recorded(project, session, { exported, kept: importerKinds }))
  }, 600_000)

  afterAll(() => oc?.stop())

  it("records the prune OpenCode runs after the last turn, though the session is never continued", () => {
    const prunes = (events: ReadonlyArray<Events.Event>) =>
      events.filter((e) => e._tag === "PartCompacted").map((e) => JSON.stringify(Events.encode(e)))
    expect(prunes(imported).length).toBeGreaterThan(0)
    expect(prunes(all)).toEqual(prunes(imported))
    expect(stored.map(comparable)).toEqual(imported.map(comparable))
  })

  it("records the title OpenCode generates, so the live session's title is the import's", () => {
    const titleOf = (events: ReadonlyArray<Events.Event>) => events.reduce(Events.title, undefined)
    expect(titleOf(imported)).toBe(TITLE)
    expect(titleOf(all)).toBe(TITLE)
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
