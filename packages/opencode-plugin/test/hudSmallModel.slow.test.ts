// Drive's HUD when OpenCode names a small model for titles (`small_model`), in the real OpenCode (npm opencode-ai
// 1.18.33). OpenCode's title call on a session's first turn gives its model whole in the system transform before the
// agent's call is built; the agent call's HUD must show the session model's window, not the small model's.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as OpenCode from "./support/OpenCode.ts"
import { lastUser } from "./support/Requests.ts"
import { type Captured, type Reply, textOf } from "./support/ScriptedModel.ts"

const script = (request: Captured): Reply => (request.kind === "other" ? { text: "Scripted" } : { text: "Noted." })

describe("drive's HUD beside a small model for titles, in the real OpenCode", () => {
  let oc: OpenCode.Running

  beforeAll(async () => {
    oc = await OpenCode.running({ script, plugin: { drive: true } })
    // A second model of the scripted provider, far smaller, for OpenCode's titles; read when the server starts again.
    const file = Path.join(oc.project.dir, "opencode.json")
    const config = JSON.parse(Fs.readFileSync(file, "utf8"))
    config.provider.scripted.models.tiny = { limit: { context: 8_000, output: 1_000 } }
    config.small_model = "scripted/tiny"
    Fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`)
    await oc.server.stop()
    await oc.restart()
    // A turn without `--title` (the helpers' `turn` passes one): OpenCode generates the title with its small model.
    await OpenCode.opencode(
      oc.project,
      OpenCode.turnArgs("Hello.", { attach: oc.server.url, args: ["--format", "json"] }),
    )
  }, 1_500_000)

  afterAll(() => oc?.stop())

  it("runs OpenCode's title call on the small model (what the check below needs)", () => {
    expect(oc.model.requests.filter((r) => r.kind === "other").map((r) => r.body.model)).toContain("tiny")
  })

  it("shows the agent's first call the session model's usable window, not the small model's", () => {
    const calls = oc.model.requests.filter((r) => r.kind === "agent")
    expect(calls.length).toBeGreaterThan(0)
    // 200,000 of context less 4,000 of output; the small model's would be 7,000.
    for (const request of calls)
      expect(textOf(request.body.messages.at(-1)!), lastUser(request).slice(0, 20)).toContain(" / 196,000 tokens")
  })
})
