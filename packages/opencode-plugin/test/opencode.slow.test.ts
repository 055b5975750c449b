// The plugin inside the real OpenCode (npm opencode-ai 1.18.33), driven by a scripted model over loopback: five
// `opencode run` turns of one session — six large reads, two small turns (then OpenCode prunes the reads), a recall
// of a pruned output by search and then by id, page by page, and a turn whose usage fills the context (OpenCode
// compacts). Checked: the plugin loads and records into .pivot/opencode.db; the HUD reaches every agent call; the
// recalled pages put together are the pruned output's exact bytes; at every agent call the store held a version whose
// window equals the messages OpenCode sent; the summariser got pivot's facts block and no secret; and the stored
// events are exactly the import of OpenCode's own export (nothing lost, nothing twice).
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Events, type ModelMessage } from "@pivot/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fromRequest, fromWindow, storedEvents, windows } from "./support/Compare.ts"
import { comparable, importerKinds, recorded, storeOf } from "./support/Exported.ts"
import { files } from "./support/Files.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, lastUserText, type Reply, type ScriptedModel, textOf } from "./support/ScriptedModel.ts"
import * as Viewer from "./support/Viewer.ts"

const WORD = "zanzibarquux"
const SECRET = "sk-proj-Q7x9VbT2mK4pL8nR3sW6yZ1aC5dF0gH2jK7"
const FILES = 6

const last = (request: Captured) => request.body.messages.at(-1)!

/** The scripted model: what it answers depends on the turn's prompt and what came back since. */
const script =
  (dir: string) =>
  (request: Captured): Reply => {
    if (request.kind === "summary")
      return { text: "## Goal\nRead six files and recall one.\n\n## Progress\nAll read.", promptTokens: 5_000 }
    const prompt = lastUserText(request)
    const after = last(request)
    if (prompt.includes("read the six files"))
      return after.role === "user"
        ? {
            toolCalls: Array.from({ length: FILES }, (_, i) => ({
              name: "read",
              args: { filePath: Path.join(dir, `f${i + 1}.txt`) },
            })),
            promptTokens: 2_000,
          }
        : { text: "I read all six.", promptTokens: 80_000 }
    if (prompt.includes("recall")) {
      if (after.role === "user") return { toolCalls: [{ name: "context_recall", args: { query: WORD } }] }
      const result = textOf(after)
      const id = /id (prt_[A-Za-z0-9]+)/.exec(result)?.[1]
      const more = /call context_recall with id (prt_[A-Za-z0-9]+) and offset (\d+)/.exec(result)
      if (more !== null)
        return { toolCalls: [{ name: "context_recall", args: { id: more[1], offset: Number(more[2]) } }] }
      if (result.includes("best first") && id !== undefined)
        return { toolCalls: [{ name: "context_recall", args: { id } }] }
      return { text: "Recalled it.", promptTokens: 30_000 }
    }
    if (prompt.includes("fill the context")) return { text: "The context is full now.", promptTokens: 199_000 }
    if (prompt.startsWith("Continue if you have next steps")) return { text: "Nothing left.", promptTokens: 6_000 }
    return { text: "Noted.", promptTokens: 81_000 }
  }

describe("the plugin in the real OpenCode", () => {
  let oc: OpenCode.Running
  let model: ScriptedModel
  let project: OpenCode.Project
  let session: string
  let viewer: Viewer.Viewer | undefined
  const heads: Array<number> = []

  beforeAll(async () => {
    // The HUD asked for (record mode has it off by default): it is checked in every agent call.
    oc = await OpenCode.running({
      script: (request, { dir }) => script(dir)(request),
      config: { compaction: { prune: true } },
      plugin: { redactOnRecord: true, hud: true },
      files: files(FILES, WORD),
    })
    ;({ model, project } = oc)
    const turn = oc.turn
    session = OpenCode.sessionOf(await turn(`Please read the six files. My key is ${SECRET}, keep it safe.`))
    await turn("Second turn, nothing to do.", session)
    await turn("Third turn, nothing to do.", session)
    // The viewer opens on the live session: its page follows the turns still to come.
    viewer = await Viewer.open(db(), `/sessions/${session}`)
    heads.push(await viewer.head())
    await turn(`Please recall what the ${WORD} file said.`, session)
    await viewer.page.waitForFunction(
      (seen) => Number((globalThis as any).document.getElementById("live")?.dataset.head) > seen,
      heads[0]!,
      {
        timeout: 30_000,
      },
    )
    heads.push(await viewer.head())
    await turn("Now fill the context.", session)
    await turn("Now fill the context again.", session)
  }, 600_000)

  afterAll(async () => {
    await viewer?.close()
    await oc?.stop()
  })

  const db = () => storeOf(project)
  const agentCalls = () => model.requests.filter((r) => r.kind === "agent")

  it("loads from a file:// URL, records into .pivot/opencode.db and logs no failure", async () => {
    expect(Fs.existsSync(db())).toBe(true)
    expect(Fs.existsSync(Path.join(project.dir, ".pivot/opencode-plugin.log"))).toBe(false)
    const tools = agentCalls()[0]!.body.tools!.map((t) => t.function.name)
    expect(tools).toContain("context_recall")
    expect(tools).toContain("context_compact")
  })

  it("puts the usage HUD in the system prompt of every agent call", () => {
    for (const request of agentCalls()) {
      const system = request.body.messages.filter((m) => m.role === "system").map(textOf)
      expect(system.some((s) => s.includes("[pivot context status]"))).toBe(true)
    }
    // The HUD follows the usage OpenCode recorded: the last call before the compaction saw the 80,000 of turn one.
    const texts = agentCalls().flatMap((r) => r.body.messages.filter((m) => m.role === "system").map(textOf))
    expect(texts.some((t) => t.includes("context: 81,010 / 196,000 tokens"))).toBe(true)
  })

  it("answers context_recall with the exact bytes of a pruned output", async () => {
    const exported = (await OpenCode.exportSession(project, session)) as {
      messages: Array<{ parts: Array<{ id: string; state?: { output?: string; time?: { compacted?: number } } }> }>
    }
    const parts = exported.messages.flatMap((m) => m.parts)
    const pruned = parts.filter((p) => p.state?.time?.compacted !== undefined)
    expect(pruned.length).toBeGreaterThan(0)
    // Every recall call and its answer, by call id, from the requests' histories.
    const calls = new Map<string, { args: { id?: string; query?: string; offset?: number }; result?: string }>()
    for (const request of model.requests)
      for (const m of request.body.messages) {
        for (const c of m.tool_calls ?? [])
          if (c.function.name === "context_recall") calls.set(c.id, { args: JSON.parse(c.function.arguments) })
        if (m.role === "tool" && calls.has(m.tool_call_id!)) calls.get(m.tool_call_id!)!.result = textOf(m)
      }
    const search = [...calls.values()].find((c) => c.args.query !== undefined)!
    const id = /id (prt_[A-Za-z0-9]+)/.exec(search.result!)![1]!
    const original = parts.find((p) => p.id === id)!.state!.output!
    expect(original).toContain(WORD)
    const pages = [...calls.values()]
      .filter((c) => c.args.id === id)
      .sort((a, b) => (a.args.offset ?? 0) - (b.args.offset ?? 0))
      .map((c) => c.result!.replace(/\n\[Recall truncated: [^\]]*\]$/, ""))
    expect(pages.length).toBeGreaterThan(1)
    expect(pages.join("")).toBe(original)
  })

  /**
   * For each agent call, the first stored version (not before the previous call's) whose window equals what OpenCode
   * sent. One deviation is known and deliberate (docs/parity.md, deviation 2): after a second compaction whose tail
   * reaches back across the first, OpenCode's window still shows the first marker and summary inside the tail (two
   * summaries at once), and pivot's does not. Such a call is matched without that pair and reported as `deviation`.
   */
  const matches = async () => {
    const byVersion = windows(await storedEvents(db(), session)).map(
      ([v, items]) => [v, JSON.stringify(items)] as const,
    )
    let previous = 0
    return agentCalls().map((request) => {
      const sent = fromRequest(request.body.messages)
      const find = (items: ReadonlyArray<unknown>) =>
        byVersion.find(([v, window]) => v >= previous && window === JSON.stringify(items))?.[0]
      let version = find(sent)
      let deviation = false
      if (version === undefined) {
        const inner = sent.findIndex((m, i) => i > 0 && m.role === "user" && m.text === "What did we do so far?")
        if (inner > 0) {
          version = find([...sent.slice(0, inner), ...sent.slice(inner + 2)])
          deviation = version !== undefined
        }
      }
      if (version !== undefined) previous = version
      return { sent, version, deviation }
    })
  }

  it("held, at every agent call, a version whose window equals the messages OpenCode sent", async () => {
    const found = await matches()
    for (const [i, m] of found.entries())
      expect(m.version, `agent call ${i}: no stored version has its window`).toBeDefined()
    // Every call but the one after the second compaction matches exactly.
    expect(found.filter((m) => m.deviation).length).toBe(1)
    expect(found.at(-1)!.deviation).toBe(true)
  })

  it("shows the session growing live in pivot serve, in Chromium, while OpenCode runs", async () => {
    expect(heads[0]).toBeGreaterThan(0)
    expect(heads[1]).toBeGreaterThan(heads[0]!)
    // After the last turn the page has caught up with the whole stream.
    const head = (await storedEvents(db(), session)).length
    await viewer!.page.waitForFunction(
      (n) => Number((globalThis as any).document.getElementById("live")?.dataset.head) >= n,
      head,
      {
        timeout: 30_000,
      },
    )
    await viewer!.page.reload()
    await viewer!.page.waitForSelector("body[data-ready='true']", { timeout: 30_000 })
    const shot = Path.join(OpenCode.ROOT, "docs/img/opencode-live.png")
    await viewer!.page.screenshot({ path: shot, fullPage: true })
    expect(Fs.statSync(shot).size).toBeGreaterThan(10_000)
  })

  it("serves the pivot command on the live store: window --at, inspect, check and fork while OpenCode runs", async () => {
    const pivot = (...args: Array<string>) =>
      execFileSync(
        process.execPath,
        ["--conditions=@pivot/source", Path.join(OpenCode.ROOT, "packages/cli/src/bin.ts"), ...args],
        { encoding: "utf8", cwd: project.dir, stdio: ["ignore", "pipe", "pipe"] },
      )
    const exact = (await matches()).filter((m) => !m.deviation).at(-1)!
    const printed = JSON.parse(
      pivot("window", "--db", db(), "--session", session, "--at", String(exact.version), "--format", "json"),
    )
    expect(fromWindow(printed.messages.map((m: { message: ModelMessage.ModelMessage }) => m.message))).toEqual(
      exact.sent,
    )
    expect(pivot("inspect", "--db", db(), "--session", session)).toContain(`session ${session}`)
    expect(pivot("check", "--db", db())).toContain("ok")
    expect(pivot("fork", session, "--db", db(), "--into", "ses_forkedFromOpenCode")).toContain("ses_forkedFromOpenCode")
  })

  it("gives OpenCode's summariser the facts block and no secret, and the summary keeps the facts", async () => {
    const summaries = model.requests.filter((r) => r.kind === "summary")
    expect(summaries.length).toBe(2)
    const first = JSON.stringify(summaries[0]!.body.messages)
    expect(first).toContain("## Facts (from the log)")
    expect(first).toContain("f1.txt")
    expect(first).not.toContain("[pivot context status]")
    // redactOnRecord: the secret the user typed was stored redacted, so the summariser never sees it.
    expect(first).not.toContain(SECRET)
    expect(first).toContain("[REDACTED:")
    // The second compaction: OpenCode anchors the first summary itself (once), and that summary carries the facts
    // block pivot appended to it, so the files read before the first pivot are still known.
    const second = summaries[1]!.body.messages.map(textOf).join("\n")
    expect(second.split("\n<prior-summary>\n").length).toBe(2)
    expect(second).not.toContain("<previous-summary>")
    const prior = second.slice(second.indexOf("\n<prior-summary>\n"), second.indexOf("</prior-summary>"))
    expect(prior).toContain("Read six files and recall one.")
    expect(prior).toContain("## Facts (from the log)")
    expect(second.slice(second.lastIndexOf("## Facts (from the log)"))).toContain("f1.txt")
    // Redacted as OpenCode recorded it: no model call and no stored event holds the secret.
    expect(agentCalls().some((r) => JSON.stringify(r.body.messages).includes(SECRET))).toBe(false)
    expect(JSON.stringify((await storedEvents(db(), session)).map((e) => Events.encode(e)))).not.toContain(SECRET)
  })

  it("stored exactly the import of OpenCode's export: nothing lost, nothing twice", async () => {
    const { imported, stored } = await recorded(project, session, { kept: importerKinds })
    expect(stored.map(comparable)).toEqual(imported.map(comparable))
  })
})
