// Why `opencode run` took ~70 s longer with the plugin in `npm run bench:opencode -- --startup` (issue 29 item 4), in
// the real OpenCode (npm opencode-ai 1.18.33). Not the plugin's hooks: at every start OpenCode installs
// `@opencode-ai/plugin` into its config folders in the background and, when any plugin is configured, waits for that
// install before it loads the plugins. The bench's scratch home is offline (npm behind a dead proxy), where the install
// fails only after npm's retries. The scratch home is now left as OpenCode's own install leaves it on a machine with the
// registry (`pluginApiInstalled`), so a run with the plugin reaches the model without any install — checked here in the
// bench's own setting, through OpenCode's log: which steps it took, not how long they lasted.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { binaryPath, MODEL, run, type Workspace, workspace } from "../../opencode/test/oracle/opencode.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type ScriptedModel, start } from "./support/ScriptedModel.ts"

describe("a first `opencode run` with the plugin, offline as the bench runs it, in the real OpenCode", () => {
  let model: ScriptedModel
  let ws: Workspace
  let ran: Awaited<ReturnType<typeof run>>

  beforeAll(async () => {
    OpenCode.build()
    model = await start(() => ({ text: "Hello." }))
    // With a plugin, the workspace leaves out OPENCODE_PURE (it would keep OpenCode from loading any plugin but its own).
    ws = workspace({
      baseURL: `http://127.0.0.1:${model.port}/v1`,
      context: 160_000,
      output: 8_000,
      plugins: [OpenCode.pluginEntry({ drive: true })],
    })
    ran = await run(binaryPath(), ["run", "--print-logs", "-m", MODEL, "Say hello."], { cwd: ws.repo, env: ws.env })
  }, 300_000)

  afterAll(async () => {
    await model?.close()
    ws?.remove()
  })

  it("answers, with the plugin loaded and recording", () => {
    expect(ran.status).toBe(0)
    expect(model.requests.some((r) => r.kind === "agent")).toBe(true)
    // The plugin ran its hooks: the session is in its store.
    expect(Fs.existsSync(Path.join(ws.repo, ".pivot"))).toBe(true)
  })

  it("finds OpenCode's plugin package installed and tries no install (the ~70 s wait offline)", () => {
    expect(ran.stderr).toContain("message=loading path=")
    expect(ran.stderr).not.toContain("dependency install failed")
  })
})
