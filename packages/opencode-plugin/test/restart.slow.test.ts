// OpenCode killed mid-session (SIGKILL while a model call is on the wire, a tool's output just in) and started again:
// the plugin resumes recording from OpenCode's own storage, and the store ends up holding exactly the import of the
// session's export — nothing lost, nothing twice.
import * as Path from "node:path"
import { Events } from "@pivot/core"
import { afterAll, expect, it } from "vitest"
import { comparable, importerKinds, recorded } from "./support/Exported.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { lastUserText, type Reply } from "./support/ScriptedModel.ts"

let oc: OpenCode.Running | undefined
afterAll(() => oc?.stop())

it("resumes after OpenCode is killed mid-call: the store equals the import of the export", async () => {
  oc = await OpenCode.running({
    script: (request, { dir }): Reply => {
      const prompt = lastUserText(request)
      if (prompt.includes("second") && request.body.messages.at(-1)!.role === "user")
        return { toolCalls: [{ name: "read", args: { filePath: Path.join(dir, "notes.txt") } }] }
      return { text: prompt.includes("first") ? "One." : prompt.includes("second") ? "Two." : "Three." }
    },
    files: { "notes.txt": "line one\nline two\n" },
  })
  const { model, project } = oc
  const session = OpenCode.sessionOf(await oc.turn("The first turn."))
  // The call after the tool's output: OpenCode dies with it on the wire.
  const dying = oc.server
  model.onRequest = (request) => {
    if (request.body.messages.at(-1)!.role === "tool") void dying.kill()
  }
  await OpenCode.opencode(project, OpenCode.turnArgs("The second turn.", { session, attach: dying.url }))
  await dying.stop()
  model.onRequest = undefined

  await oc.restart()
  await oc.turn("The third turn.", session)

  const { imported, stored } = await recorded(project, session, { kept: importerKinds })
  expect(stored.map(comparable)).toEqual(imported.map(comparable))
  // The killed turn's tool output and the third turn are both there.
  const texts = JSON.stringify(stored.map((e) => Events.encode(e)))
  expect(texts).toContain("line two")
  expect(texts).toContain("Three.")
}, 600_000)
