/** bench:opencode's session shapes: the pauses taken out, and the summariser's answer sized as a real summary. */
import * as Path from "node:path"
import { BuiltInStrategies, Session, Strategy, Window } from "@pivot/core"
import { Import } from "@pivot/opencode"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import {
  ARTIFACTS,
  FILES,
  SHAPES,
  SUMMARY_TOKENS,
  summaryText,
  type Turn,
  withoutPauses,
} from "../bench/support/opencodeSession.ts"

const GAP = 60_000
const TTL = 5 * 60_000

describe("withoutPauses", () => {
  it("shortens every pause longer than a turn's gap to the gap, and leaves the turns otherwise alone", () => {
    const turns = [
      { prompt: "a", steps: [], pauseBefore: 0 },
      { prompt: "b", steps: [], pauseBefore: GAP - 1 },
      { prompt: "c", steps: [], pauseBefore: GAP },
      { prompt: "d", steps: [], pauseBefore: GAP + 1 },
      { prompt: "e", steps: [], pauseBefore: 8 * GAP },
    ]
    expect(withoutPauses(turns).map((t) => t.pauseBefore)).toEqual([0, GAP - 1, GAP, GAP, GAP])
    expect(withoutPauses(turns).map((t) => t.prompt)).toEqual(["a", "b", "c", "d", "e"])
  })

  it("leaves the bench's sessions no pause longer than the cache's TTL, where they had two", () => {
    for (const shape of Object.values(SHAPES)) {
      expect(shape.turns.filter((t) => t.pauseBefore > TTL)).toHaveLength(2)
      expect(withoutPauses(shape.turns).filter((t) => t.pauseBefore > TTL)).toHaveLength(0)
    }
  })
})

describe("summaryText", () => {
  const call = (name: string, args: Record<string, unknown>, id: string) => ({
    id,
    type: "function" as const,
    function: { name, arguments: JSON.stringify(args) },
  })
  const body: Parameters<typeof summaryText>[0] = {
    model: "scripted",
    messages: [
      { role: "user", content: "Look at the parser." },
      { role: "assistant", content: "", tool_calls: [call("read", { filePath: "/repo/src/parser.ts" }, "c1")] },
      { role: "tool", content: "// PARSER-TAIL-32000", tool_call_id: "c1" },
      { role: "assistant", content: "", tool_calls: [call("bash", { command: "git status --short" }, "c2")] },
    ],
  }

  it("is as long as a real summary, within one line of SUMMARY_TOKENS × 4 characters", () => {
    const text = summaryText(body)
    expect(text.length).toBeGreaterThan(SUMMARY_TOKENS * 4 - 300)
    expect(text.length).toBeLessThan(SUMMARY_TOKENS * 4 + 300)
  })

  it("names what the history touched, and quotes no artifact's marker", () => {
    const text = summaryText(body)
    expect(text).toContain("- read parser.ts")
    expect(text).toContain("- bash git status --short")
    for (const a of ARTIFACTS) expect(text).not.toContain(a.marker)
  })
})

// Every zero-cost rule has something to do on the bench's session: the session as OpenCode stores it (each step a tool
// part in OpenCode's shape, an edit whose oldString is not in the file an `error` part, as OpenCode's edit tool
// fails), imported by pivot's importer, and at the first call of each turn after a pause longer than the cache's TTL
// (where cache-aware lets the rules in under drive mode) each rule the bench names chooses a part.
describe("the zero-cost rules on the bench's session", () => {
  const SESSION = "ses_bench"
  const REPO = "/repo"

  /**
   * Whether OpenCode's edit tool applies `oldString` to `file`: found as it is, or (a block of three lines or more)
   * by its first and last lines, trimmed, as OpenCode's block-anchor matching finds it (the bench saw a five-line edit
   * whose middle line was not in the file succeed so).
   */
  const applies = (file: string, oldString: string): boolean => {
    if (file.includes(oldString)) return true
    const lines = oldString.split("\n").map((l) => l.trim())
    if (lines.length < 3) return false
    const have = new Set(file.split("\n").map((l) => l.trim()))
    return have.has(lines[0]!) && have.has(lines.at(-1)!)
  }

  /** The session's turns up to the first call of turn `upTo` (0-based), as `opencode export` would give them. */
  const exported = (turns: ReadonlyArray<Turn>, upTo: number) => {
    const files = new Map(Object.entries(FILES))
    const messages: Array<unknown> = []
    let clock = 1_760_000_000_000
    let n = 0
    const id = (prefix: string) => `${prefix}_${String(++n).padStart(4, "0")}`
    const model = { providerID: "scripted", modelID: "scripted" }
    const tokens = { input: 1_000, output: 10, reasoning: 0, cache: { read: 0, write: 0 } }
    for (const [t, turn] of turns.slice(0, upTo + 1).entries()) {
      clock += turn.pauseBefore
      const user = id("msg")
      messages.push({
        info: { id: user, sessionID: SESSION, role: "user", time: { created: clock }, agent: "build", model },
        parts: [{ type: "text", text: turn.prompt, id: id("prt"), sessionID: SESSION, messageID: user }],
      })
      if (t === upTo) break
      for (const step of turn.steps) {
        const file = "file" in step ? step.file : undefined
        const before = file === undefined ? undefined : files.get(file)
        let input: Record<string, unknown>
        let outcome: { readonly output: string } | { readonly error: string }
        switch (step.tool) {
          case "read":
            input = { filePath: Path.join(REPO, step.file) }
            outcome = { output: `<file>\n${before}\n</file>` }
            break
          case "write":
            input = { filePath: Path.join(REPO, step.file), content: step.content }
            files.set(step.file, step.content)
            outcome = { output: "Wrote file successfully." }
            break
          case "edit":
            input = { filePath: Path.join(REPO, step.file), oldString: step.oldString, newString: step.newString }
            if (before !== undefined && applies(before, step.oldString)) {
              if (before.includes(step.oldString)) files.set(step.file, before.replace(step.oldString, step.newString))
              outcome = { output: "Edit applied successfully." }
            } else outcome = { error: "Error: oldString not found in content" }
            break
          case "bash":
            input = { command: step.command, description: "Runs a command" }
            outcome = { output: "4\n" }
            break
        }
        const assistant = id("msg")
        clock += 1_000
        const start = clock
        clock += 1_000
        const end = clock
        const state =
          "error" in outcome
            ? { status: "error", input, error: outcome.error, time: { start, end } }
            : { status: "completed", input, output: outcome.output, title: "", metadata: {}, time: { start, end } }
        messages.push({
          info: {
            id: assistant,
            sessionID: SESSION,
            role: "assistant",
            time: { created: start - 500, completed: end },
            parentID: user,
            modelID: model.modelID,
            providerID: model.providerID,
            mode: "build",
            agent: "build",
            path: { cwd: REPO, root: REPO },
            cost: 0,
            tokens,
            finish: "tool-calls",
          },
          parts: [
            {
              type: "tool",
              tool: step.tool,
              callID: id("call"),
              state,
              id: id("prt"),
              sessionID: SESSION,
              messageID: assistant,
            },
          ],
        })
      }
    }
    return {
      info: {
        id: SESSION,
        slug: "bench",
        projectID: "p1",
        directory: REPO,
        title: "bench",
        version: "1.18.33",
        time: { created: 0, updated: 0 },
      },
      messages,
    }
  }

  /** What each rule chooses at the first call of turn `upTo` on a cold cache: the rule's name, the tools it chose. */
  const chosen = (upTo: number) => {
    const imported = Import.importSession(exported(SHAPES.base!.turns, upTo))
    if (Result.isFailure(imported)) throw imported.failure
    const state = imported.success.events.reduce(Session.evolve, Session.initialState)
    const limits = { context: SHAPES.base!.context, output: SHAPES.base!.output }
    const input: Strategy.Input = {
      messages: Window.messages(state.window),
      now: 0,
      cache: { lastCallAt: 0, ttl: Strategy.DEFAULT_TTL, cold: true, atPivot: false },
      config: {},
      limits,
      compactionLimits: limits,
      prune: {},
      rates: undefined,
      mayCompact: true,
    }
    const tools = new Map(
      outputsOf(input).map((call) => [
        call.partId,
        `${call.tool}${call.part.state.status === "error" ? " (failed)" : ""}`,
      ]),
    )
    return Object.fromEntries(
      BuiltInStrategies.rules.map((rule) => [rule.name, rule.select(input).map((p) => tools.get(p.partId))]),
    )
  }
  const outputsOf = (input: Strategy.Input) => Strategy.outputs(input.messages)

  it("gives each rule the bench runs something to clear at the second cold moment (turn 7)", () => {
    const pauses = SHAPES.base!.turns.flatMap((t, i) => (t.pauseBefore > 5 * 60_000 ? [i] : []))
    expect(pauses).toEqual([3, 6])
    // The re-reads of src/parser.ts and src/router.ts; the write of src/metrics.ts read back (the two edits read back
    // are one-line edits: their strings are shorter than what a cleared input keeps, so clearing them sheds nothing);
    // the failed edit of src/router.ts, four turns before.
    expect(chosen(6)).toEqual({
      "duplicate-calls": ["read", "read", "read", "read"],
      "superseded-writes": ["write"],
      "errored-inputs": ["edit (failed)"],
    })
  })

  it("leaves the failed edit's input alone at the first cold moment (turn 4): one turn after it, not two", () => {
    expect(chosen(3)["errored-inputs"]).toEqual([])
  })
})
