// The recorder race of issue 29 on the real OpenCode (npm opencode-ai 1.18.33): turns posted through OpenCode's HTTP
// API (`POST /session/:id/message`, answered when the turn's loop ends), each the moment the previous one ended, with a
// provider slow to answer each turn's first call, so the next turn's step is running while the plugin's end-of-turn
// sync reads the session. Checked: the store is exactly the import of `opencode export` (nothing recorded unfinished,
// recording never stopped), and the plugin logged no failure.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createSession, prompt } from "../../opencode/test/oracle/opencode.ts"
import { LOG_FILE } from "../src/Plugin.ts"
import { comparable, importerKinds, recorded } from "./support/Exported.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, type Reply, textOf } from "./support/ScriptedModel.ts"

const TURNS = 4

const script = (request: Captured): Reply => {
  if (request.kind !== "agent") return { text: "Race" }
  const after = request.body.messages.at(-1)!
  // Each turn's first call answers late: the turn's step runs meanwhile.
  return after.role === "user"
    ? { text: `Answered ${textOf(after).slice(0, 20)}.`, promptTokens: 2_000, delayMs: 3_000 }
    : { text: "Done.", promptTokens: 2_000 }
}

describe("turns posted back to back in the real OpenCode", () => {
  let oc: OpenCode.Running
  let project: OpenCode.Project
  let session: string

  beforeAll(async () => {
    oc = await OpenCode.running({ script })
    project = oc.project
    session = await createSession(oc.server)
    for (let n = 1; n <= TURNS; n++) await prompt(oc.server, session, `Turn ${n}: answer at once.`)
  }, 900_000)

  afterAll(() => oc?.stop())

  it("recorded exactly the import of OpenCode's export, and logged no failure", async () => {
    const { imported, stored } = await recorded(project, session, { kept: importerKinds })
    expect(imported.filter((e) => e._tag === "AssistantStepRecorded").length).toBe(TURNS)
    expect(stored.map(comparable)).toEqual(imported.map(comparable))
    const log = Path.join(project.dir, ".pivot", LOG_FILE)
    expect(Fs.existsSync(log) ? Fs.readFileSync(log, "utf8") : "").toBe("")
  }, 300_000)
})
