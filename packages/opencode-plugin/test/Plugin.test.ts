// The hooks with a fake OpenCode client over a fixture session and a SQLite store in a temporary folder: recording,
// the HUD, the recall tool, the compaction additions, and failures that never reach OpenCode.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"
import { Events, Tokens } from "@pivot/core"
import { Hud } from "@pivot/runtime"
import { afterEach, describe, expect, it } from "vitest"
import { z } from "zod"
import type { Client, Hooks, MessageWithParts } from "../src/OpenCode.ts"
import * as Plugin from "../src/Plugin.ts"
import { storedEvents } from "./support/Compare.ts"

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")
const SECRET = "sk-proj-Q7x9VbT2mK4pL8nR3sW6yZ1aC5dF0gH2jK7"
const MODEL = { id: "claude-sonnet-4", providerID: "anthropic", limit: { context: 20_000, output: 4_000 } }

interface Session {
  info: { id: string }
  messages: Array<MessageWithParts>
}

const session = (): Session => JSON.parse(Fs.readFileSync(fixture, "utf8")) as Session

/** A fake client answering from `data`; `broken` makes every call fail as the SDK does (`error`, no `data`). */
const fakeClient = (data: Session, logs: Array<string>, broken = false): Client => ({
  session: {
    get: async () => (broken ? { error: { name: "NotFound" } } : { data: data.info }),
    messages: async () => (broken ? { error: { name: "NotFound" } } : { data: data.messages }),
    summarize: async () => ({ data: true }),
  },
  app: {
    log: async (options) => {
      logs.push(options.body.message)
    },
  },
})

const folders: Array<string> = []
const disposers: Array<Hooks> = []
afterEach(async () => {
  for (const hooks of disposers.splice(0)) await hooks.dispose()
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

const setup = async (options: Plugin.Options = {}, broken = false) => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-plugin-"))
  folders.push(directory)
  const data = session()
  const logs: Array<string> = []
  const hooks = await Plugin.make({ client: fakeClient(data, logs, broken), directory }, options, {})
  disposers.push(hooks)
  return { directory, data, logs, hooks, db: Path.join(directory, ".pivot/opencode.db") }
}

const transform = async (hooks: Hooks, sessionID: string) => {
  const output = { system: ["You are opencode."] }
  await hooks["experimental.chat.system.transform"]({ sessionID, model: MODEL }, output)
  return output.system
}

describe("the plugin's hooks", () => {
  it("records the session into .pivot/opencode.db on OpenCode's events, kept out of git", async () => {
    const { hooks, data, db, directory } = await setup()
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: data.info.id } } })
    const events = await storedEvents(db, data.info.id)
    expect(events.filter((e) => e._tag === "AssistantStepRecorded")).toHaveLength(4)
    expect(events.filter((e) => e._tag === "PartCompacted")).toHaveLength(2)
    expect(Fs.readFileSync(Path.join(directory, ".pivot/.gitignore"), "utf8")).toBe("*\n")
  })

  it("records OpenCode's prune when its pruned parts come in, though the session goes no further", async () => {
    const { hooks, data, db, directory } = await setup()
    const pruned = data.messages
      .flatMap((m) => m.parts)
      .filter(
        (p) => (p as { state?: { time?: { compacted?: number } } }).state?.time?.compacted !== undefined,
      ) as unknown as Array<{
      state: { time: { compacted?: number } }
    }>
    for (const part of pruned) delete part.state.time.compacted
    // It runs after the turn: later than every message.
    const end = Math.max(
      ...data.messages.map((m) => Number((m.info as unknown as { time: { created: number } }).time.created)),
    )
    // The turn ended before the prune: nothing pruned yet.
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: data.info.id } } })
    expect((await storedEvents(db, data.info.id)).filter((e) => e._tag === "PartCompacted")).toHaveLength(0)
    // OpenCode prunes in the background, one part at a time; the plugin is disposed (OpenCode exits) right after.
    for (const [i, part] of pruned.entries()) {
      part.state.time.compacted = end + 60_000 + i
      await hooks.event({
        event: { type: "message.part.updated", properties: { sessionID: data.info.id, part: part as never } },
      })
    }
    await hooks.dispose()
    const events = await storedEvents(db, data.info.id)
    expect(events.filter((e) => e._tag === "PartCompacted").map((e) => e.at)).toEqual([end + 60_000, end + 60_000 + 1])
    expect(Fs.existsSync(Path.join(directory, ".pivot", Plugin.LOG_FILE))).toBe(false)
  })

  it("records the title OpenCode gives the session after its placeholder, once per new title", async () => {
    const { hooks, data, db } = await setup()
    const info = data.info as { id: string; title?: string }
    info.title = "New session - 2026-12-01T10:00:00.000Z"
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: data.info.id } } })
    info.title = "Fix the parser"
    for (let i = 0; i < 2; i++)
      await hooks.event({ event: { type: "session.updated", properties: { sessionID: info.id, info } } })
    const events = await storedEvents(db, data.info.id)
    expect(events[0]).toMatchObject({ _tag: "SessionStarted", title: "New session - 2026-12-01T10:00:00.000Z" })
    expect(events.filter((e) => e._tag === "SessionTitled")).toHaveLength(1)
    expect(events.reduce(Events.title, undefined)).toBe("Fix the parser")
  })

  it("reads the session once for the burst of bus events before the first request, and records all of it", async () => {
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-plugin-"))
    folders.push(directory)
    const full = session()
    const info = { ...full.info, title: "New session - 2026-12-02T10:00:00.000Z" }
    // A new session: OpenCode holds the first user message only.
    const data: { info: { id: string; title: string }; messages: Array<MessageWithParts> } = {
      info,
      messages: full.messages.slice(0, 1),
    }
    const sessionID = info.id
    let reads = 0
    const client: Client = {
      session: {
        get: async () => ({ data: { ...data.info } }),
        messages: async () => {
          reads++
          return { data: data.messages }
        },
        summarize: async () => ({ data: true }),
      },
    }
    const hooks = await Plugin.make({ client, directory }, {}, {})
    disposers.push(hooks)
    const user = data.messages[0]!
    const updated = () => ({ type: "session.updated", properties: { sessionID, info: { ...data.info } } })
    // As `opencode run` goes (OpenCode calls `event` without waiting for it; every other hook it awaits).
    const events = [
      hooks.event({ event: { type: "session.created", properties: { info: { ...data.info } } } }),
      hooks.event({ event: updated() }),
      hooks.event({ event: { type: "message.updated", properties: { info: user.info } } }),
      hooks.event({ event: { type: "message.part.updated", properties: { part: user.parts[0] } } }),
    ]
    await hooks["chat.message"]({ sessionID }, { parts: [] })
    events.push(hooks.event({ event: { type: "session.status", properties: { sessionID, status: { type: "busy" } } } }))
    // The title generator's call, then its title, while the agent's first call is built.
    const titleCall = { system: [`${Plugin.HELPER_PROMPTS[0]} Write a title.`] }
    await hooks["experimental.chat.system.transform"]({ sessionID, model: MODEL }, titleCall)
    data.info.title = "Fix the parser"
    events.push(hooks.event({ event: updated() }))
    await transform(hooks, sessionID)
    await Promise.all(events)
    expect(reads).toBe(1)
    // Nothing lost: the turn's end records the title, and the session holds the user message.
    await hooks.event({ event: { type: "session.idle", properties: { sessionID } } })
    const stored = await storedEvents(Path.join(directory, ".pivot/opencode.db"), sessionID)
    expect(stored.reduce(Events.title, undefined)).toBe("Fix the parser")
    expect(stored.filter((e) => e._tag === "UserMessageAdded")).toHaveLength(1)
  })

  it("records no message still being written when a compaction ends (OpenCode goes on with the continue call)", async () => {
    const { hooks, data, db } = await setup()
    const last = data.messages.at(-1)!.info as unknown as {
      time: { created: number; completed?: number }
      finish?: string
    }
    delete last.time.completed
    delete last.finish
    await hooks.event({ event: { type: "session.compacted", properties: { sessionID: data.info.id } } })
    const steps = (await storedEvents(db, data.info.id)).filter((e) => e._tag === "AssistantStepRecorded")
    expect(steps).toHaveLength(3)
  })

  it("given hud, adds the usage HUD of the session to the system prompt, recorded once per text", async () => {
    const { hooks, data, db } = await setup({ hud: true })
    const system = await transform(hooks, data.info.id)
    // The reference, from the fixture and OpenCode's rules: the last call's input + output, usable = context - output.
    const pruned = data.messages
      .flatMap((m) => m.parts)
      .filter((p) => (p as { state?: { time?: { compacted?: number } } }).state?.time?.compacted !== undefined)
      .map((p) => (p as unknown as { state: { output: string } }).state.output)
    const expected = Hud.render(
      {
        tokens: 420 + 10,
        usable: 20_000 - 4_000,
        pivots: 0,
        prunedParts: pruned.length,
        prunedTokens: pruned.reduce((n, text) => n + Tokens.estimate(text), 0),
      },
      { recall: true },
    )
    expect(system).toEqual(["You are opencode.", expected])
    await transform(hooks, data.info.id)
    const shown = (await storedEvents(db, data.info.id)).filter((e) => e._tag === "HudShown")
    expect(shown.map((e) => (e as { text: string }).text)).toEqual([expected])
    // In the system prompt: no `last`.
    expect(shown.map((e) => (e as { last?: boolean }).last)).toEqual([undefined])
  })

  it("counts the system prompt and the tools' schemas in the HUD's estimate while no usage measured the window", async () => {
    const { hooks, data } = await setup({ hud: true })
    data.messages.splice(1) // the first user message only: no model call answered yet
    const shown = async (system: string) => {
      const output = { system: [system] }
      await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, output)
      return Number(/context: ([\d,]+) \//.exec(output.system[1]!)![1]!.replaceAll(",", ""))
    }
    const bare = await shown("")
    const schema = { type: "object", properties: { filePath: { type: "string" } }, required: ["filePath"] }
    await hooks["tool.definition"]({ toolID: "read" }, { description: "Reads a file.", jsonSchema: schema })
    const prompt = "You are opencode, an interactive CLI tool. ".repeat(100)
    // As a provider receives them: 4 characters a token.
    const tool = JSON.stringify({
      type: "function",
      function: { name: "read", description: "Reads a file.", parameters: schema },
    })
    expect(await shown(prompt)).toBe(bare + Math.round(prompt.length / 4) + Math.round(tool.length / 4))
    // A zod schema (what OpenCode gives for some tools) is converted, and counts.
    const zodded = Plugin.toolSchemaTokens("read", {
      description: "Reads a file.",
      parameters: z.object({ filePath: z.string() }),
    })
    expect(zodded).toBeGreaterThan(Plugin.toolSchemaTokens("read", { description: "Reads a file." }) + 5)
  })

  it("leaves the HUD out of OpenCode's title and summariser calls", async () => {
    const { hooks, data } = await setup({ hud: true })
    for (const prompt of [
      "You are a title generator. You output ONLY a thread title.",
      "You are a context summarization agent. You are given",
    ]) {
      const output = { system: [prompt] }
      await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, output)
      expect(output.system).toEqual([prompt])
    }
  })

  it("leaves the HUD out when the hud option is off, and in record mode by default (it would break the cache)", async () => {
    for (const options of [{ hud: false }, {}]) {
      const { hooks, data, db } = await setup(options)
      expect(await transform(hooks, data.info.id)).toEqual(["You are opencode."])
      expect((await storedEvents(db, data.info.id)).filter((e) => e._tag === "HudShown")).toEqual([])
    }
  })

  it("says once which option it does not know or cannot take, and goes on without it (a switch at its default)", async () => {
    const { hooks, data, db, logs, directory } = await setup({ drvie: true, hud: "yes" } as unknown as Plugin.Options)
    // Record mode, the HUD at its default (off): "yes" is not taken for true.
    expect(await transform(hooks, data.info.id)).toEqual(["You are opencode."])
    await transform(hooks, data.info.id)
    expect((await storedEvents(db, data.info.id)).length).toBeGreaterThan(0)
    expect(logs).toHaveLength(1)
    expect(logs[0]).toContain('unknown option "drvie" (did you mean "drive"?)')
    expect(logs[0]).toContain('hud must be true or false, got "yes"')
    const logged = Fs.readFileSync(Path.join(directory, ".pivot", Plugin.LOG_FILE), "utf8")
      .trim()
      .split("\n")
    expect(logged).toHaveLength(1)
    // Known options of the right type say nothing.
    const quiet = await setup({ drive: false, hud: false, db: ".pivot/opencode.db" })
    expect(quiet.logs).toEqual([])
  })

  it("answers context_recall with a search, then the exact original by id", async () => {
    const { hooks, data } = await setup()
    const context = { sessionID: data.info.id, messageID: "msg_99" }
    // The grep output of the fixture is one word: searching for it finds that part.
    const grep = data.messages.flatMap((m) => m.parts).find((p) => p.tool === "grep") as unknown as {
      id: string
      state: { output: string }
    }
    const found = await hooks.tool.context_recall!.execute({ query: grep.state.output }, context)
    const id = /id (prt_[A-Za-z0-9_]+)/.exec(found)?.[1]
    expect(id).toBe(grep.id)
    const part = data.messages.flatMap((m) => m.parts).find((p) => (p as { id?: string }).id === id) as unknown as {
      state: { output: string }
    }
    expect(part).toBeDefined()
    expect(await hooks.tool.context_recall!.execute({ id }, context)).toBe(part.state.output)
  })

  it("gives OpenCode's summariser pivot's facts block", async () => {
    const { hooks, data } = await setup()
    const output: { context: Array<string>; prompt?: string } = { context: [] }
    await hooks["experimental.session.compacting"]({ sessionID: data.info.id }, output)
    expect(output.context).toHaveLength(1)
    expect(output.context[0]).toContain("## Facts (from the log)")
    expect(output.prompt).toBeUndefined()
  })

  it("redacts secrets from the user's text and tool outputs as OpenCode records them, with redactOnRecord", async () => {
    const record = async (hooks: Hooks) => {
      const message = { parts: [{ type: "text", text: `my key is ${SECRET}` as unknown }, { type: "file" }] }
      await hooks["chat.message"]({ sessionID: "ses_x" }, message)
      const tool = { output: `export OPENAI_API_KEY=${SECRET}` as unknown }
      await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_x", callID: "c1" }, tool)
      return JSON.stringify([message, tool])
    }
    const on = await record((await setup({ redactOnRecord: true })).hooks)
    expect(on).not.toContain(SECRET)
    expect(on).toContain("[REDACTED:")
    // Off by default: what the user typed reaches the model as typed.
    expect(await record((await setup()).hooks)).toContain(SECRET)
  })

  it("appends the facts block to the summary OpenCode writes next, once, merged with the previous summary's", async () => {
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-plugin-"))
    folders.push(directory)
    const data = JSON.parse(
      Fs.readFileSync(Path.join(Path.dirname(fixture), "compaction-tail.json"), "utf8"),
    ) as Session
    const hooks = await Plugin.make({ client: fakeClient(data, []), directory }, {}, {})
    disposers.push(hooks)
    const output: { context: Array<string>; prompt?: string } = { context: [] }
    await hooks["experimental.session.compacting"]({ sessionID: data.info.id }, output)
    const ids = { sessionID: data.info.id, messageID: "msg_99", partID: "prt_99" }
    const summary = { text: "## Goal\nGo on." }
    await hooks["experimental.text.complete"](ids, summary)
    expect(summary.text.startsWith("## Goal\nGo on.\n\n## Facts (from the log)")).toBe(true)
    expect(summary.text.slice(summary.text.indexOf("## Facts"))).toBe(output.context[0])
    const next = { text: "Later text." }
    await hooks["experimental.text.complete"](ids, next)
    expect(next.text).toBe("Later text.")
  })

  it("never fails a hook: a broken client is logged to OpenCode and to the log file, and the hooks go on", async () => {
    const { hooks, logs, directory } = await setup({}, true)
    const system = await transform(hooks, "ses_broken")
    expect(system).toEqual(["You are opencode."])
    await expect(
      hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_broken" } } }),
    ).resolves.toBeUndefined()
    const answer = await hooks.tool.context_recall!.execute(
      { query: "anything" },
      { sessionID: "ses_broken", messageID: "msg_1" },
    )
    expect(answer).toContain("unavailable")
    expect(logs.length).toBe(3)
    const lines = Fs.readFileSync(Path.join(directory, ".pivot", Plugin.LOG_FILE), "utf8")
      .trim()
      .split("\n")
    expect(lines).toHaveLength(3)
    expect(JSON.parse(lines[0]!)).toMatchObject({ what: "system.transform", sessionId: "ses_broken" })
  })

  it("never fails to load on a bad db option: it is logged, without the URL's password, and the hooks go on", async () => {
    for (const db of ["postgres://me:hunter2@[::1/pivot", 42, ""]) {
      const { hooks, logs, directory } = await setup({ db } as unknown as Plugin.Options)
      expect(await transform(hooks, "ses_pruned")).toEqual(["You are opencode."])
      await expect(
        hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_pruned" } } }),
      ).resolves.toBeUndefined()
      expect(logs.length, String(db)).toBeGreaterThan(0)
      expect(logs.join("\n")).toContain("db")
      const file = Fs.readFileSync(Path.join(directory, ".pivot", Plugin.LOG_FILE), "utf8")
      expect(file).not.toContain("hunter2")
      expect(logs.join("\n")).not.toContain("hunter2")
    }
  })

  it("logs a store it cannot open once per path, however many hooks run, and opens it once it can", async () => {
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-plugin-"))
    folders.push(directory)
    // A file where the store's folder should be: the path cannot be written (root ignores permission bits).
    Fs.writeFileSync(Path.join(directory, "blocked"), "")
    const data = session()
    const logs: Array<string> = []
    const hooks = await Plugin.make({ client: fakeClient(data, logs), directory }, { db: "blocked/pivot.db" }, {})
    disposers.push(hooks)
    for (let turn = 0; turn < 3; turn++) {
      expect(await transform(hooks, data.info.id)).toEqual(["You are opencode."])
      await hooks.event({ event: { type: "session.idle", properties: { sessionID: data.info.id } } })
    }
    expect(logs).toHaveLength(1)
    expect(logs[0]).toContain("blocked")
    // The folder becomes writable: the next hook opens the store and records.
    Fs.rmSync(Path.join(directory, "blocked"))
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: data.info.id } } })
    const events = await storedEvents(Path.join(directory, "blocked/pivot.db"), data.info.id)
    expect(events.filter((e) => e._tag === "AssistantStepRecorded")).toHaveLength(4)
    expect(logs).toHaveLength(1)
  })

  it("opens its store as soon as it is made, before any hook needs it: a new file's schema is made off the request's path", async () => {
    const { hooks, db } = await setup()
    // No hook called. The opening begins a macrotask after the hooks are made; dispose waits for it.
    await new Promise((resolve) => setTimeout(resolve, 0))
    await hooks.dispose()
    const file = new DatabaseSync(db, { readOnly: true })
    const tables = file.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()
    file.close()
    expect(tables.map((t) => t.name)).toContain("pivot_events")
  })

  it("says nothing when the store it opens at start cannot be opened: the first hook that needs it reports it", async () => {
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-plugin-"))
    folders.push(directory)
    Fs.writeFileSync(Path.join(directory, "blocked"), "")
    const data = session()
    const logs: Array<string> = []
    const made = await Plugin.make({ client: fakeClient(data, logs), directory }, { db: "blocked/pivot.db" }, {})
    await new Promise((resolve) => setTimeout(resolve, 0))
    await made.dispose()
    expect(logs).toEqual([])
    const hooks = await Plugin.make({ client: fakeClient(data, logs), directory }, { db: "blocked/pivot.db" }, {})
    disposers.push(hooks)
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: data.info.id } } })
    expect(logs).toHaveLength(1)
    expect(logs[0]).toContain("blocked")
  })

  it("sizes a tool's definition again when OpenCode changes it, and not otherwise", async () => {
    const { hooks, data } = await setup({ hud: true })
    data.messages.splice(1)
    const schema = { type: "object", properties: { filePath: { type: "string" } } }
    const shown = async (description: string) => {
      await hooks["tool.definition"]({ toolID: "read" }, { description, jsonSchema: schema })
      const output = { system: ["You are opencode."] }
      await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, output)
      return Number(/context: ([\d,]+) \//.exec(output.system[1]!)![1]!.replaceAll(",", ""))
    }
    const first = await shown("Reads a file.")
    expect(await shown("Reads a file.")).toBe(first)
    // 400 more characters: 100 more tokens, as a provider counts them (4 characters a token).
    expect(await shown(`Reads a file.${"x".repeat(400)}`)).toBe(first + 100)
  })

  it("records into the store PIVOT_DB names, and a postgres:// URL is taken as one", () => {
    expect(Plugin.resolveDb("/p", {}, { PIVOT_DB: "x/y.db" })).toEqual({ _tag: "Sqlite", file: "/p/x/y.db" })
    expect(Plugin.resolveDb("/p", { db: "postgres://u@h/db" }, { PIVOT_DB: "x.db" })).toEqual({
      _tag: "Postgres",
      url: "postgres://u@h/db",
      schema: "public",
    })
    expect(Plugin.resolveDb("/p", {}, { PIVOT_DB: "postgresql://u@h:5/db?schema=work" })).toEqual({
      _tag: "Postgres",
      url: "postgresql://u@h:5/db",
      schema: "work",
    })
    expect(Plugin.resolveDb("/p", {}, {})).toEqual({ _tag: "Sqlite", file: "/p/.pivot/opencode.db" })
    expect(Plugin.resolveDb("/p", {}, { PIVOT_DB: "" })).toEqual({ _tag: "Sqlite", file: "/p/.pivot/opencode.db" })
  })
})
