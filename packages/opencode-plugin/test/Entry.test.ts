// The plugin's lazy entry (src/index.ts, as OpenCode loads it): what it answers before the hooks load.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, expect, it } from "vitest"
import PivotPlugin from "../src/index.ts"
import type { Client, MessageWithParts } from "../src/OpenCode.ts"

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")
const MODEL = { id: "claude-sonnet-4", providerID: "anthropic", limit: { context: 20_000, output: 4_000 } }

const folders: Array<string> = []
afterEach(() => {
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

/** The HUD's estimate of the first call of the fixture's session, the read tool defined before or after the hooks load. */
const estimate = async (defined: "before" | "after" | "never") => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-entry-"))
  folders.push(directory)
  const data = JSON.parse(Fs.readFileSync(fixture, "utf8")) as {
    info: { id: string }
    messages: Array<MessageWithParts>
  }
  data.messages.splice(1) // the first user message only: no usage measured the window yet
  const client: Client = {
    session: {
      get: async () => ({ data: data.info }),
      messages: async () => ({ data: data.messages }),
      summarize: async () => ({ data: true }),
    },
  }
  const hooks = await PivotPlugin({ client, directory }, { hud: true, db: Path.join(directory, "pivot.db") })
  const define = () =>
    hooks["tool.definition"](
      { toolID: "read" },
      { description: "Reads a file.", jsonSchema: { type: "object", properties: { filePath: { type: "string" } } } },
    )
  if (defined === "before") await define()
  // The first hook with work to do: the hooks load.
  await hooks["chat.message"]({ sessionID: data.info.id }, { parts: [] })
  if (defined === "after") await define()
  const output = { system: ["You are opencode."] }
  await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, output)
  await hooks.dispose()
  return Number(/context: ([\d,]+) \//.exec(output.system[1]!)![1]!.replaceAll(",", ""))
}

it("hands the tools' definitions OpenCode gave before the hooks loaded to them: the HUD counts them as those given after", async () => {
  const before = await estimate("before")
  expect(before).toBe(await estimate("after"))
  expect(before).toBeGreaterThan(await estimate("never"))
})

/** A new project's folder and a client over an empty session. */
const empty = () => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-entry-"))
  folders.push(directory)
  const client: Client = {
    session: {
      get: async () => ({ data: { id: "ses_entry" } }),
      messages: async () => ({ data: [] }),
      summarize: async () => ({ data: true }),
    },
  }
  return { directory, client }
}

it("hands the hooks a message OpenCode sent before they loaded, before any later call: the model it names is known to context_compact", async () => {
  const { directory, client } = empty()
  const hooks = await PivotPlugin({ client, directory }, { db: Path.join(directory, "pivot.db") })
  await hooks["chat.message"](
    { sessionID: "ses_entry", model: { providerID: "anthropic", modelID: "claude" } },
    { parts: [] },
  )
  const answer = await hooks.tool.context_compact!.execute({}, { sessionID: "ses_entry", messageID: "msg_entry" })
  await hooks.dispose()
  expect(answer).toBe("Compaction requested: OpenCode summarises the conversation when this step ends.")
})

it("redacts a message OpenCode sent before the hooks loaded before answering it (redactOnRecord)", async () => {
  const { directory, client } = empty()
  const hooks = await PivotPlugin({ client, directory }, { db: Path.join(directory, "pivot.db"), redactOnRecord: true })
  const output = { parts: [{ type: "text", text: "my key is AKIAIOSFODNN7EXAMPLE" }] }
  await hooks["chat.message"]({ sessionID: "ses_entry" }, output)
  await hooks.dispose()
  expect(output.parts[0]!.text).not.toContain("AKIAIOSFODNN7EXAMPLE")
})
