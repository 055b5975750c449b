/** `pivot import` of Claude Code and Codex CLI transcripts: by content, a folder at once, incremental, never rewriting. */
import * as fs from "node:fs"
import * as path from "node:path"
import { importTranscript } from "@pivot/agents"
import { Events } from "@pivot/core"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { pivot, repoRoot, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const fixtures = path.join(repoRoot, "packages/agents/test/fixtures")
const claude = path.join(fixtures, "hand-written/claude-code-compaction.jsonl")
const claudeSession = "ses_claude-code-7f3c2a10-0000-4000-8000-00000000c1a0"

const stored = (db: string, sessionId: string) =>
  Effect.runPromise(
    SessionLog.read(sessionId).pipe(
      Effect.map((log) => log.map((l) => JSON.stringify(Events.encode(l.event)))),
      Effect.provide(ReadModels.layerSqlite({ filename: db })),
    ),
  )

describe("pivot import of agent transcripts", () => {
  it("given a folder, then every session in it is stored, and importing the folder again records nothing", async () => {
    const db = path.join(dir, "folder.db")
    const first = await pivot("import", fixtures, "--db", db)
    expect(first.code).toBe(0)
    expect(first.out.filter((l) => l.startsWith("imported "))).toHaveLength(8)
    const again = await pivot("import", fixtures, "--db", db)
    expect(again.code).toBe(0)
    expect(again.out.filter((l) => l.endsWith("nothing new"))).toHaveLength(8)
    const expected = importTranscript(fs.readFileSync(claude, "utf8"), { final: true })!.events
    expect(await stored(db, claudeSession)).toEqual(expected.map((e) => JSON.stringify(Events.encode(e))))
  })

  it("given a transcript imported while it was shorter, then a re-run appends only the new lines' events", async () => {
    const db = path.join(dir, "grow.db")
    const file = path.join(dir, "grow.jsonl")
    const lines = fs.readFileSync(claude, "utf8").split("\n")
    // Cut before the compaction boundary: the last answer's lines are complete, so a plain import records them.
    fs.writeFileSync(file, `${lines.slice(0, 11).join("\n")}\n`)
    expect((await pivot("import", file, "--db", db)).code).toBe(0)
    const before = await stored(db, claudeSession)
    fs.writeFileSync(file, lines.join("\n"))
    const grown = await pivot("import", file, "--db", db)
    expect(grown.code).toBe(0)
    const after = await stored(db, claudeSession)
    expect(after.slice(0, before.length)).toEqual(before)
    const whole = importTranscript(lines.join("\n"), { final: true })!.events
    expect(after).toEqual(whole.map((e) => JSON.stringify(Events.encode(e))))
    expect(grown.out[1]).toContain(`${whole.length - before.length} new events`)
  })

  it("given a stored session its file no longer matches, then nothing is imported and the error names the event", async () => {
    const db = path.join(dir, "differs.db")
    const file = path.join(dir, "differs.jsonl")
    const text = fs.readFileSync(claude, "utf8")
    fs.writeFileSync(file, text)
    expect((await pivot("import", file, "--db", db)).code).toBe(0)
    const before = await stored(db, claudeSession)
    fs.writeFileSync(file, text.replace("Fix it.", "Fix it now."))
    const refused = await pivot("import", file, "--db", db)
    expect(refused.code).toBe(1)
    expect(refused.err.join("\n")).toMatch(/differs from .* at event 2 .*nothing imported/)
    expect(await stored(db, claudeSession)).toEqual(before)
  })

  it("given --follow on an OpenCode export or a folder, then it is wrong usage (exit 2)", async () => {
    const db = path.join(dir, "usage.db")
    const opencode = path.join(repoRoot, "packages/opencode/test/fixtures/compaction-tail.json")
    expect((await pivot("import", opencode, "--follow", "--db", db)).code).toBe(2)
    expect((await pivot("import", fixtures, "--follow", "--db", db)).code).toBe(2)
  })

  it("given a folder with a subagent's file and a session its stored copy refuses, then the others are stored, and the exit is 1", async () => {
    const db = path.join(dir, "mixed.db")
    const folder = path.join(dir, "mixed")
    fs.mkdirSync(path.join(folder, "subagents"), { recursive: true })
    const text = fs.readFileSync(claude, "utf8")
    fs.writeFileSync(path.join(folder, "a.jsonl"), text)
    // A subagent's own file: sidechain lines of the same session id, none of the session's window.
    const sidechain = text
      .split("\n")
      .filter((l) => l.includes('"type":"user"'))
      .map((l) => l.replace('"isSidechain":false', '"isSidechain":true'))
    fs.writeFileSync(path.join(folder, "subagents", "agent-1.jsonl"), `${sidechain.join("\n")}\n`)
    const first = await pivot("import", folder, "--db", db)
    expect(first.code).toBe(0)
    expect(first.stdout).toContain("only a subagent's lines")
    // Another file of the same session that says otherwise, beside a Codex rollout.
    fs.writeFileSync(path.join(folder, "b.jsonl"), text.replace("Fix it.", "Fix it now."))
    fs.copyFileSync(path.join(fixtures, "hand-written/codex-compaction.jsonl"), path.join(folder, "c.jsonl"))
    const second = await pivot("import", folder, "--db", db)
    expect(second.code).toBe(1)
    expect(second.err.join("\n")).toMatch(/b\.jsonl at event 2/)
    expect(second.out.some((l) => l.startsWith("imported Codex CLI session"))).toBe(true)
  })
})
