// The strategy comparison over real HTTP (issue 30): GET /api/sessions/<id>/whatif replays a stored session under each
// built-in strategy, the same as the runtime's `WhatIf.session` on its events; bad parameters are a 400 with one line.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { WhatIf, WhatIfTable } from "@pivot/runtime"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Serve } from "../src/index.ts"
import { play, writeSqlite } from "./support/play.ts"

const SESSION = "ses_whatif"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-whatif-"))
const db = path.join(dir, "pivot.db")
const events = play({ sessionId: SESSION, turns: 16 })
let server: Serve.Started

beforeAll(async () => {
  await writeSqlite(db, SESSION, events)
  server = await Serve.start({ source: db, port: 0 })
})

afterAll(async () => {
  await server?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const get = async (query: string) => {
  const response = await fetch(`http://127.0.0.1:${server.port}/api/sessions/${SESSION}/whatif${query}`)
  return { status: response.status, body: (await response.json()) as any }
}

describe("GET /api/sessions/<id>/whatif", () => {
  it("replays the session under the strategies asked for, as WhatIf.session does on its events", async () => {
    const { status, body } = await get("?context=20000&output=4000&strategies=cache-aware,opencode-1.17")
    expect(status).toBe(200)
    expect(body.runs.map((r: { strategy: string }) => r.strategy)).toEqual(["cache-aware", "opencode-1.17"])
    const steps = events.filter((e) => e._tag === "AssistantStepRecorded" && e.message.summary !== true).length
    for (const run of body.runs) expect(run.calls).toBe(steps)
    const direct = await Effect.runPromise(
      WhatIf.session(SESSION, events, { strategies: ["cache-aware", "opencode-1.17"], context: 20_000, output: 4_000 }),
    )
    // Beside the figures, the table `pivot whatif` prints (`WhatIfTable`): the viewer shows those rows.
    const table = { rows: WhatIfTable.rows(direct), legend: WhatIfTable.legend }
    expect(body).toEqual({ head: events.length, ...JSON.parse(JSON.stringify(direct)), table })
    expect(body.table.rows[0]).toEqual({ label: "model calls", cells: [String(steps), String(steps)], detail: false })
    // Asked again: the same answer.
    expect((await get("?context=20000&output=4000&strategies=cache-aware,opencode-1.17")).body).toEqual(body)
  })

  it("answers a bad parameter with a 400 and one line", async () => {
    const cases = [
      ["?context=20000&strategies=pivot,nope", /^unknown strategy "nope": expected one of /],
      ["", /^no context window known for test\/test-model/],
      ["?context=abc", /^context must be a number of tokens/],
      ["?context=0", /^context must be a number of tokens/],
      ["?context=20000&cache=gemini", /^cache must be anthropic or openai/],
    ] as const
    for (const [query, pattern] of cases) {
      const { status, body } = await get(query)
      expect(status, query).toBe(400)
      expect(body.error).toMatch(pattern)
      expect(body.error).not.toContain("\n")
      expect(body.error, "the API's parameters, not the command's flags").not.toContain("--")
    }
    expect((await get("")).body.error).toContain("give it (context N, and output N)")
  })
})
