// The recorder race of issue 29: OpenCode publishes `session.idle` when a turn ends, and the next turn can begin before
// the plugin's end-of-turn sync reads the session back. That sync must then record only what is finished: recording
// the next turn's running step as if the session had stopped made every later sync diverge, and recording stopped.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Events } from "@pivot/core"
import { Import } from "@pivot/opencode"
import * as Result from "effect/Result"
import { afterEach, describe, expect, it } from "vitest"
import type { BusEvent, Client, Hooks, MessageWithParts } from "../src/OpenCode.ts"
import * as Plugin from "../src/Plugin.ts"
import * as Recorder from "../src/Recorder.ts"
import { storedEvents } from "./support/Compare.ts"

const fixture = Path.resolve(
  Path.dirname(fileURLToPath(import.meta.url)),
  "../../opencode/test/fixtures/compaction-tail.json",
)

interface Session {
  info: { id: string }
  messages: Array<MessageWithParts>
}

const folders: Array<string> = []
const disposers: Array<Hooks> = []
afterEach(async () => {
  for (const hooks of disposers.splice(0)) await hooks.dispose()
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

/** An assistant message as OpenCode holds it while its step runs: not completed, no finish. */
const running = (message: MessageWithParts): MessageWithParts => {
  const { finish: _, ...info } = message.info as MessageWithParts["info"] & { time: { created: number } }
  return { info: { ...info, time: { created: info.time.created } }, parts: message.parts.slice(0, 1) }
}

const imported = (info: unknown, messages: ReadonlyArray<MessageWithParts>) => {
  const result = Import.importSession({ info, messages })
  if (Result.isFailure(result)) throw result.failure
  return result.success.events.map((e) => JSON.stringify(Events.encode(e)))
}

/** How the next turn begins: OpenCode's `chat.message` for a typed message, or its session going busy. */
const begins: ReadonlyArray<readonly [string, (hooks: Hooks, sessionID: string) => Promise<void>]> = [
  [
    "chat.message",
    (hooks, sessionID) => hooks["chat.message"]({ sessionID }, { parts: [{ type: "text", text: "x" }] }),
  ],
  [
    "session.status busy",
    (hooks, sessionID) =>
      hooks.event({ event: { type: "session.status", properties: { sessionID, status: { type: "busy" } } } }),
  ],
]

describe("the end-of-turn sync when the next turn has begun", () => {
  it.each(begins)(
    "records only what is finished (the next turn began by %s), and recording goes on",
    async (_, begin) => {
      const full = JSON.parse(Fs.readFileSync(fixture, "utf8")) as Session
      const sessionID = full.info.id
      const data: Session = { info: full.info, messages: full.messages.slice(0, 2) }
      // Reads of the session wait for `release` while a test holds them: the sync reads what OpenCode holds then.
      let held: Promise<void> | undefined
      const client: Client = {
        session: {
          get: async () => ({ data: data.info }),
          messages: async () => {
            if (held !== undefined) await held
            return { data: data.messages }
          },
          summarize: async () => ({ data: true }),
        },
      }
      const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-race-"))
      folders.push(directory)
      const hooks = await Plugin.make({ client, directory }, {}, {})
      disposers.push(hooks)
      const db = Path.join(directory, ".pivot/opencode.db")
      const idle: BusEvent = { type: "session.idle", properties: { sessionID } }

      await begin(hooks, sessionID)
      // Turn 1 ends; OpenCode publishes idle, and the next turn begins before the sync has read the session.
      let release = () => {}
      held = new Promise((resolve) => {
        release = resolve
      })
      const ending = hooks.event({ event: idle })
      await begin(hooks, sessionID)
      data.messages = [...full.messages.slice(0, 3), running(full.messages[3]!)]
      release()
      await ending
      held = undefined
      const steps = (await storedEvents(db, sessionID)).filter((e) => e._tag === "AssistantStepRecorded")
      expect(steps.map((e) => (e as { message: { id: string } }).message.id)).toEqual([full.messages[1]!.info.id])

      // Turn 2 ends: the record is the import of what OpenCode holds, nothing diverged.
      data.messages = full.messages.slice(0, 5)
      await hooks.event({ event: idle })
      const stored = (await storedEvents(db, sessionID)).filter((e) => Recorder.IMPORTED.has(e._tag))
      expect(stored.map((e) => JSON.stringify(Events.encode(e)))).toEqual(imported(full.info, data.messages))
      expect(Fs.existsSync(Path.join(directory, ".pivot", Plugin.LOG_FILE))).toBe(false)
    },
  )

  it("still records a step left unfinished when the session really stopped (no turn began since idle)", async () => {
    const full = JSON.parse(Fs.readFileSync(fixture, "utf8")) as Session
    const sessionID = full.info.id
    const data: Session = { info: full.info, messages: [...full.messages.slice(0, 3), running(full.messages[3]!)] }
    const client: Client = {
      session: {
        get: async () => ({ data: data.info }),
        messages: async () => ({ data: data.messages }),
        summarize: async () => ({ data: true }),
      },
    }
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-race-"))
    folders.push(directory)
    const hooks = await Plugin.make({ client, directory }, {}, {})
    disposers.push(hooks)
    await hooks["chat.message"]({ sessionID }, { parts: [] })
    await hooks.event({ event: { type: "session.idle", properties: { sessionID } } })
    const steps = (await storedEvents(Path.join(directory, ".pivot/opencode.db"), sessionID)).filter(
      (e) => e._tag === "AssistantStepRecorded",
    )
    expect(steps.map((e) => (e as { message: { id: string } }).message.id)).toEqual([
      full.messages[1]!.info.id,
      full.messages[3]!.info.id,
    ])
  })
})
