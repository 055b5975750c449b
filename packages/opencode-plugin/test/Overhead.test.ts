// The HUD's estimate under drive mode on a session's first call in a process (issue 29 item 5): OpenCode builds its
// system prompt after the messages transform, so the plugin counts what the store measured instead — the session's own
// fixed prompt (a process continuing it), else the project's newest session of the same agent and model (a new
// session), and keeps counting it after OpenCode gave the system prompt. The reference: the fixed prompt folded from
// the stored log by core's `FixedPrompt`, and record mode's HUD of the session with an empty system prompt and no tool
// (the window's estimate alone).
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { FixedPrompt } from "@pivot/core"
import { afterEach, describe, expect, it } from "vitest"
import type { Client, Hooks, MessageWithParts } from "../src/OpenCode.ts"
import * as Overhead from "../src/Overhead.ts"
import * as Plugin from "../src/Plugin.ts"
import { storedEvents } from "./support/Compare.ts"

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")
const MODEL = { id: "claude-sonnet-4", providerID: "anthropic", limit: { context: 20_000, output: 4_000 } }

interface Exported {
  info: { id: string; time?: { created: number; updated: number } }
  messages: Array<MessageWithParts>
}

const load = (): Exported => JSON.parse(Fs.readFileSync(fixture, "utf8")) as Exported

/** The fixture as session `id`, last updated at `updated`: every id naming the session replaced. */
const sessionAs = (id: string, updated: number): Exported => {
  const data = load()
  const copy = JSON.parse(JSON.stringify(data).replaceAll(data.info.id, id)) as Exported
  const info = copy.info as { time: { created: number; updated: number } }
  info.time.updated = updated
  return copy
}

const folders: Array<string> = []
const opened: Array<Hooks> = []
afterEach(async () => {
  for (const hooks of opened.splice(0)) await hooks.dispose()
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

/** OpenCode's client over `sessions` (by id), listing them as `session.list` does. */
const clientOf = (sessions: ReadonlyArray<Exported>): Client => {
  const byId = (id: string) => sessions.find((s) => s.info.id === id)
  return {
    session: {
      get: async ({ path }) => ({ data: byId(path.id)?.info }),
      messages: async ({ path }) => ({ data: byId(path.id)?.messages }),
      summarize: async () => ({ data: true }),
      list: async () => ({
        data: sessions.map((s) => ({ id: s.info.id, time: { updated: s.info.time?.updated ?? 0 } })),
      }),
    },
  }
}

/** A process of OpenCode with the plugin (drive mode) in `directory`. */
const processIn = async (directory: string, sessions: ReadonlyArray<Exported>) => {
  const hooks = await Plugin.make({ client: clientOf(sessions), directory }, { drive: true }, {})
  opened.push(hooks)
  return hooks
}

/** The count the HUD of a drive call of `data` shows (`context: N / …`). */
const shown = async (hooks: Hooks, data: Exported): Promise<number> => {
  const output = { messages: structuredClone(data.messages) }
  await hooks["experimental.chat.messages.transform"]({}, output)
  const text = (output.messages.at(-1)!.parts[0] as unknown as { text: string }).text
  return Number(/context: ([\d,]+) \//.exec(text)![1]!.replaceAll(",", ""))
}

/**
 * The window's estimate alone: record mode's HUD of the same session in a store of its own, given an empty system
 * prompt and no tool (record mode counts the system prompt it is given, nothing measured).
 */
const windowOnly = async (data: Exported): Promise<number> => {
  const hooks = await Plugin.make({ client: clientOf([data]), directory: scratch() }, { hud: true }, {})
  opened.push(hooks)
  const output = { system: [""] }
  await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, output)
  return Number(/context: ([\d,]+) \//.exec(output.system[1]!)![1]!.replaceAll(",", ""))
}

/** The fixed prompt the session's stored log measured (core's fold, the reference). */
const fixedOf = async (directory: string, sessionId: string) =>
  (await storedEvents(Path.join(directory, ".pivot/opencode.db"), sessionId)).reduce(
    FixedPrompt.evolve,
    FixedPrompt.initial,
  ).tokens ?? Number.NaN

const scratch = () => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-overhead-"))
  folders.push(directory)
  return directory
}

/** The fixture with its last tool output pruned by OpenCode after the last call: no call measured the window since. */
const prunedAfterLastCall = (): Exported => {
  const data = load()
  const last = data.messages.at(-1)!.info as unknown as { time: { completed: number } }
  const part = data.messages.flatMap((m) => m.parts).findLast((p) => p.type === "tool") as unknown as {
    state: { time: { compacted?: number } }
  }
  part.state.time.compacted = last.time.completed + 1
  return data
}

describe("the HUD's estimate on a session's first call in a process (drive mode)", () => {
  it("counts the fixed prompt the session's recorded calls measured, in a process continuing it", async () => {
    const directory = scratch()
    const data = prunedAfterLastCall()
    await shown(await processIn(directory, [data]), data)
    await opened.shift()!.dispose()
    const fixed = await fixedOf(directory, data.info.id)
    expect(fixed).toBeGreaterThan(1_000)
    // A new process: its first call has not seen OpenCode's system prompt.
    const next = await processIn(directory, [data])
    const window = await windowOnly(data)
    expect(await shown(next, data)).toBe(window + fixed)
    // Once it has (a call right after a prune or a compaction), the measurement still stands for it: pivot's estimate
    // of the system prompt's text and the tools' schemas is not the provider's count.
    await next["experimental.chat.system.transform"](
      { sessionID: data.info.id, model: MODEL },
      { system: ["You are opencode."] },
    )
    expect(await shown(next, data)).toBe(window + fixed)
  })

  it("counts the fixed prompt of the project's newest session of the same agent and model, for a new session", async () => {
    const directory = scratch()
    const earlier = sessionAs("ses_earlier", 2)
    const older = sessionAs("ses_older", 1)
    // The older session measured another prompt: its first call was reported larger.
    ;(older.messages[1]!.info as unknown as { tokens: { input: number } }).tokens.input = 5_000
    const first = await processIn(directory, [earlier, older])
    await shown(first, older)
    await shown(first, earlier)
    await opened.shift()!.dispose()
    const fixed = await fixedOf(directory, "ses_earlier")
    expect(fixed).toBeGreaterThan(1_000)
    expect(fixed).not.toBe(await fixedOf(directory, "ses_older"))
    // A new session (its first user message only), in a new process.
    const fresh = sessionAs("ses_fresh", 3)
    fresh.messages.splice(1)
    const next = await processIn(directory, [earlier, older, fresh])
    expect(await shown(next, fresh)).toBe((await windowOnly(fresh)) + fixed)
  })

  it("does not take another model's measurement for a new session", async () => {
    const directory = scratch()
    const earlier = sessionAs("ses_earlier", 2)
    await shown(await processIn(directory, [earlier]), earlier)
    await opened.shift()!.dispose()
    const fresh = sessionAs("ses_fresh", 3)
    fresh.messages.splice(1)
    ;(fresh.messages[0]!.info as unknown as { model: { modelID: string } }).model.modelID = "claude-opus-4"
    const next = await processIn(directory, [earlier, fresh])
    expect(await shown(next, fresh)).toBe(await windowOnly(fresh))
  })
})

describe("the session list a new session's HUD reads", () => {
  it("asks OpenCode for its root sessions, at most MAX_CANDIDATES + 1, and finds the same measurement as the whole list", async () => {
    const directory = scratch()
    const earlier = sessionAs("ses_earlier", 12)
    await shown(await processIn(directory, [earlier]), earlier)
    await opened.shift()!.dispose()
    const fixed = await fixedOf(directory, "ses_earlier")
    // Older root sessions (nothing recorded of them), subagents' sessions updated since (tasks the earlier session ran),
    // then the new session.
    const olderRoots = Array.from({ length: 5 }, (_, i) => ({ id: `ses_old${i}`, time: { updated: 1 + i } }))
    const tasks = Array.from({ length: 8 }, (_, i) => ({
      id: `ses_task${i}`,
      parentID: "ses_earlier",
      time: { updated: 13 + i },
    }))
    const fresh = sessionAs("ses_fresh", 30)
    fresh.messages.splice(1)
    // OpenCode 1.18's GET /session: the most recently updated first, `roots` without subagents', `limit` (100 unless
    // given) of them.
    const listed: ReadonlyArray<{ id: string; parentID?: string; time: { updated: number } }> = [
      ...olderRoots,
      { id: "ses_earlier", time: { updated: 12 } },
      ...tasks,
      { id: "ses_fresh", time: { updated: 30 } },
    ]
    const served: Array<number> = []
    const client = clientOf([earlier, fresh])
    const hooks = await Plugin.make(
      {
        client: {
          session: {
            ...client.session,
            list: async (options) => {
              const query = options?.query
              const rows = listed
                .filter((s) => query?.roots !== true || s.parentID === undefined)
                .toSorted((a, b) => b.time.updated - a.time.updated)
                .slice(0, query?.limit ?? 100)
              served.push(rows.length)
              return { data: rows }
            },
          },
        },
        directory,
      },
      { drive: true },
      {},
    )
    opened.push(hooks)
    expect(await shown(hooks, fresh)).toBe((await windowOnly(fresh)) + fixed)
    // The new session, the earlier one and the two newest older roots: not the 15 sessions OpenCode would list.
    expect(served).toEqual([Overhead.MAX_CANDIDATES + 1])
    expect(Overhead.LIST_QUERY.limit).toBe(Overhead.MAX_CANDIDATES + 1)
  })
})

describe("Overhead.candidates", () => {
  const listed = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `ses_${i}`, time: { updated: i } }))

  it("reads the project's other root sessions, newest first, at most MAX_CANDIDATES", () => {
    const max = Overhead.MAX_CANDIDATES
    const newestFirst = (n: number) => Array.from({ length: n }, (_, i) => `ses_${n - 1 - i}`)
    expect(Overhead.candidates(listed(max - 1), "ses_x")).toEqual(newestFirst(max - 1))
    expect(Overhead.candidates(listed(max), "ses_x")).toEqual(newestFirst(max))
    expect(Overhead.candidates(listed(max + 1), "ses_x")).toEqual(newestFirst(max + 1).slice(0, max))
  })

  it("leaves out the session itself and subagents' sessions", () => {
    const sessions = [
      { id: "ses_self", time: { updated: 9 } },
      { id: "ses_task", parentID: "ses_self", time: { updated: 8 } },
      { id: "ses_root", parentID: null, time: { updated: 1 } },
    ]
    expect(Overhead.candidates(sessions, "ses_self")).toEqual(["ses_root"])
  })
})
