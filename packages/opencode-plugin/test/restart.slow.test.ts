// OpenCode killed mid-session (SIGKILL while a model call is on the wire, a tool's output just in) and started again:
// the plugin resumes recording from OpenCode's own storage, and the store ends up holding exactly the import of the
// session's export — nothing lost, nothing twice.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Events } from "@pivot/core"
import { Import } from "@pivot/opencode"
import * as Result from "effect/Result"
import { afterAll, expect, it } from "vitest"
import * as Recorder from "../src/Recorder.ts"
import { caughtUp } from "./support/Compare.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, type Reply, type ScriptedModel, start, textOf } from "./support/ScriptedModel.ts"

let model: ScriptedModel | undefined
let server: OpenCode.Server | undefined
afterAll(async () => {
  await server?.stop()
  await model?.close()
})

it("resumes after OpenCode is killed mid-call: the store equals the import of the export", async () => {
  OpenCode.build()
  let dir = ""
  const lastUser = (r: Captured) =>
    textOf([...r.body.messages].reverse().find((m) => m.role === "user") ?? { role: "user" })
  model = await start((request): Reply => {
    const prompt = lastUser(request)
    if (prompt.includes("second") && request.body.messages.at(-1)!.role === "user")
      return { toolCalls: [{ name: "read", args: { filePath: Path.join(dir, "notes.txt") } }] }
    return { text: prompt.includes("first") ? "One." : prompt.includes("second") ? "Two." : "Three." }
  })
  const project = OpenCode.project(model.port)
  dir = project.dir
  Fs.writeFileSync(Path.join(dir, "notes.txt"), "line one\nline two\n")

  server = await OpenCode.serve(project)
  const session = OpenCode.sessionOf(await OpenCode.run(project, "The first turn.", undefined, server.url))
  // The call after the tool's output: OpenCode dies with it on the wire.
  const dying = server
  model.onRequest = (request) => {
    if (request.body.messages.at(-1)!.role === "tool") void dying.kill()
  }
  await OpenCode.opencode(project, [
    "run",
    "The second turn.",
    "-m",
    "scripted/model",
    "--session",
    session,
    "--attach",
    server.url,
  ])
  await dying.stop()
  model.onRequest = undefined

  server = await OpenCode.serve(project)
  await OpenCode.run(project, "The third turn.", session, server.url)

  const db = Path.join(dir, ".pivot/opencode.db")
  const imported = Import.importSession(await OpenCode.exportSession(project, session))
  if (Result.isFailure(imported)) throw imported.failure
  const isImported = (e: Events.Event) => Recorder.IMPORTED.has(e._tag)
  const stored = (await caughtUp(db, session, isImported, imported.success.events.length)).filter(isImported)
  const encode = (e: Events.Event) => {
    const { title: _, ...rest } = e as Events.Event & { title?: string }
    return JSON.stringify(Events.encode(rest as Events.Event))
  }
  expect(stored.map(encode)).toEqual(imported.success.events.map(encode))
  // The killed turn's tool output and the third turn are both there.
  const texts = JSON.stringify(stored.map((e) => Events.encode(e)))
  expect(texts).toContain("line two")
  expect(texts).toContain("Three.")
}, 600_000)
