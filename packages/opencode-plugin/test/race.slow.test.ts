// The recorder race of issue 29 on the real OpenCode (npm opencode-ai 1.18.33): turns posted through OpenCode's HTTP
// API (`POST /session/:id/message`, answered when the turn's loop ends), each the moment the previous one ended, with a
// provider slow to answer each turn's first call, so the next turn's step is running while the plugin's end-of-turn
// sync reads the session. Checked: the store is exactly the import of `opencode export` (nothing recorded unfinished,
// recording never stopped), and the plugin logged no failure.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Events } from "@pivot/core"
import { Import } from "@pivot/opencode"
import * as Result from "effect/Result"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LOG_FILE } from "../src/Plugin.ts"
import * as Recorder from "../src/Recorder.ts"
import { caughtUp } from "./support/Compare.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, type Reply, type ScriptedModel, start, textOf } from "./support/ScriptedModel.ts"

const TURNS = 4

const script = (request: Captured): Reply => {
  if (request.kind !== "agent") return { text: "Race" }
  const after = request.body.messages.at(-1)!
  // Each turn's first call answers late: the turn's step runs meanwhile.
  return after.role === "user"
    ? { text: `Answered ${textOf(after).slice(0, 20)}.`, promptTokens: 2_000, delayMs: 3_000 }
    : { text: "Done.", promptTokens: 2_000 }
}

const post = async (url: string, path: string, body: unknown): Promise<unknown> => {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
  return response.json()
}

describe("turns posted back to back in the real OpenCode", () => {
  let model: ScriptedModel
  let project: OpenCode.Project
  let session: string
  let server: OpenCode.Server

  beforeAll(async () => {
    OpenCode.build()
    model = await start(script)
    project = OpenCode.project(model.port)
    server = await OpenCode.serve(project)
    session = ((await post(server.url, "/session", {})) as { id: string }).id
    for (let n = 1; n <= TURNS; n++)
      await post(server.url, `/session/${session}/message`, {
        model: { providerID: "scripted", modelID: "model" },
        parts: [{ type: "text", text: `Turn ${n}: answer at once.` }],
      })
  }, 900_000)

  afterAll(async () => {
    await server?.stop()
    await model?.close()
  })

  it("recorded exactly the import of OpenCode's export, and logged no failure", async () => {
    const imported = Import.importSession(await OpenCode.exportSession(project, session))
    if (Result.isFailure(imported)) throw imported.failure
    const isImported = (e: Events.Event) => Recorder.IMPORTED.has(e._tag)
    const db = Path.join(project.dir, ".pivot/opencode.db")
    const stored = (await caughtUp(db, session, isImported, imported.success.events.length)).filter(isImported)
    const encode = (e: Events.Event) => {
      const { title: _, ...rest } = e as Events.Event & { title?: string }
      return JSON.stringify(Events.encode(rest as Events.Event))
    }
    expect(imported.success.events.filter((e) => e._tag === "AssistantStepRecorded").length).toBe(TURNS)
    expect(stored.map(encode)).toEqual(imported.success.events.map(encode))
    const log = Path.join(project.dir, ".pivot", LOG_FILE)
    expect(Fs.existsSync(log) ? Fs.readFileSync(log, "utf8") : "").toBe("")
  }, 300_000)
})
