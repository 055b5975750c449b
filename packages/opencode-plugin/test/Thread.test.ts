// The hooks on a worker thread (Thread.ts, ADR 0073): what crosses the port and what OpenCode's objects hold after each
// call. The two ends run over a port pair in this process (structured clone as between threads); the real worker runs
// under OpenCode in the slow tests. Drive.test.ts runs its scenarios both ways.
import { afterEach, expect, it } from "vitest"
import { z } from "zod"
import type { Client, Hooks, MessageWithParts, PluginInput } from "../src/OpenCode.ts"
import * as Thread from "../src/Thread.ts"

const closers: Array<() => void> = []
afterEach(() => {
  for (const close of closers.splice(0)) close()
})

/** Hooks `make` builds, served through a port pair; `seen` holds what the worker's hooks received. */
const over = async (hooks: Partial<Hooks>, client: Partial<Client> = {}) => {
  const { port1, port2 } = new MessageChannel()
  const close = () => {
    port1.close()
    port2.close()
  }
  closers.push(close)
  let pending = 0
  Thread.serve(port2, async () => ({ dispose: async () => undefined, ...hooks }) as Hooks)
  const input = {
    client: { session: { get: async () => ({}), messages: async () => ({}), summarize: async () => ({}) }, ...client },
    directory: "/nowhere",
  } as PluginInput
  const remote = Thread.connect(port1, input, {}, { ref: () => pending++, unref: () => pending--, close })
  await remote.ready
  return { hooks: remote.hooks, remote, pending: () => pending }
}

const message = (id: string, text: string): MessageWithParts => ({
  info: { id, role: "user", sessionID: "ses_1" },
  parts: [{ id: `prt_${id}`, type: "text", text }],
})

it("refills OpenCode's messages array in place: a message the hook kept is OpenCode's own object, a new one a copy", async () => {
  const { hooks } = await over({
    "experimental.chat.messages.transform": async (_input, output) => {
      const [first, , third] = output.messages
      output.messages.splice(0, output.messages.length, third!, { ...first!, parts: [] }, message("m4", "hud"))
    },
  })
  const passed = [message("m1", "a"), message("m2", "b"), message("m3", "c")]
  const originals = [...passed]
  const output = { messages: passed }
  await hooks["experimental.chat.messages.transform"]({}, output)
  expect(output.messages).toBe(passed)
  expect(passed.map((m) => m.info.id)).toEqual(["m3", "m1", "m4"])
  expect(passed[0]).toBe(originals[2])
  expect(passed[1]).not.toBe(originals[0])
  expect(passed[1]).toEqual({ ...originals[0], parts: [] })
  // OpenCode's own objects are never changed.
  expect(originals[0]!.parts).toHaveLength(1)
})

it("leaves OpenCode's array alone when the hook changed nothing", async () => {
  const { hooks } = await over({ "experimental.chat.messages.transform": async () => undefined })
  const passed = [message("m1", "a")]
  const first = passed[0]
  await hooks["experimental.chat.messages.transform"]({}, { messages: passed })
  expect(passed).toEqual([first])
  expect(passed[0]).toBe(first)
})

it("writes a redacted text into OpenCode's part object, and only the texts that changed", async () => {
  const { hooks } = await over({
    "chat.message": async (_input, output) => {
      for (const part of output.parts) if (part.text === "key sk-secret") part.text = "key [REDACTED]"
    },
  })
  const parts = [
    { type: "text", text: "hello", time: { start: 1 } },
    { type: "text", text: "key sk-secret", time: { start: 2 } },
  ]
  const [hello, secret] = parts
  const time = secret!.time
  await hooks["chat.message"]({ sessionID: "ses_1" }, { parts })
  expect(parts[0]).toBe(hello)
  expect(parts[1]).toBe(secret)
  expect(parts.map((p) => p.text)).toEqual(["hello", "key [REDACTED]"])
  expect(secret!.time).toBe(time)
})

it("applies the system prompt, the compaction's lines and prompt, a summary's text, a tool's output and autocontinue", async () => {
  const { hooks } = await over({
    "experimental.chat.system.transform": async (_input, output) => {
      output.system.push("hud")
    },
    "experimental.session.compacting": async (_input, output) => {
      output.context.push("facts")
      output.prompt = "pivot's prompt"
    },
    "experimental.text.complete": async (_input, output) => {
      output.text = `${output.text} + facts`
    },
    "tool.execute.after": async (_input, output) => {
      output.output = "[REDACTED]"
    },
    "experimental.compaction.autocontinue": async (_input, output) => {
      output.enabled = false
    },
  })
  const system = ["You are opencode."]
  await hooks["experimental.chat.system.transform"](
    { sessionID: "ses_1", model: { id: "m", providerID: "p" } },
    { system },
  )
  expect(system).toEqual(["You are opencode.", "hud"])
  const context = ["theirs"]
  const compacting: { context: Array<string>; prompt?: string } = { context }
  await hooks["experimental.session.compacting"]({ sessionID: "ses_1" }, compacting)
  expect(compacting.context).toBe(context)
  expect(compacting).toEqual({ context: ["theirs", "facts"], prompt: "pivot's prompt" })
  const text = { text: "summary" }
  await hooks["experimental.text.complete"]({ sessionID: "ses_1", messageID: "m", partID: "p" }, text)
  expect(text.text).toBe("summary + facts")
  const tool = { output: "sk-secret" as unknown }
  await hooks["tool.execute.after"]({ tool: "bash", sessionID: "ses_1", callID: "c" }, tool)
  expect(tool.output).toBe("[REDACTED]")
  const enabled = { enabled: true }
  await hooks["experimental.compaction.autocontinue"]({ sessionID: "ses_1" }, enabled)
  expect(enabled.enabled).toBe(false)
})

it("asks OpenCode's client on OpenCode's thread, with the SDK's method bound, and hands back its data and error only", async () => {
  let thisSeen: unknown
  const session = {
    prefix: "ses",
    async messages(this: { prefix: string }, options: { path: { id: string } }) {
      thisSeen = this
      // An SDK answer also holds the request and the response (not copyable): only data and error cross.
      return { data: [message(`${this.prefix}-${options.path.id}`, "x")], error: undefined, response: () => 1 }
    },
    get: async () => ({ data: { id: "ses_1" } }),
    summarize: async () => ({ data: true }),
  }
  const { port1, port2 } = new MessageChannel()
  closers.push(() => {
    port1.close()
    port2.close()
  })
  let clientOf: Client | undefined
  Thread.serve(port2, async (input) => {
    clientOf = input.client
    return {
      dispose: async () => undefined,
      "experimental.chat.messages.transform": async (
        _input: unknown,
        output: { messages: Array<MessageWithParts> },
      ) => {
        const answer = await input.client.session.messages({ path: { id: "ses_1" } })
        expect(Object.keys(answer).sort()).toEqual(["data", "error"])
        output.messages.push(...answer.data!)
      },
    } as unknown as Hooks
  })
  const remote = Thread.connect(
    port1,
    { client: { session } as unknown as Client, directory: "/nowhere" },
    {},
    { ref: () => undefined, unref: () => undefined, close: () => undefined },
  )
  await remote.ready
  // The client's optional calls exist on the worker only where OpenCode's client has them.
  expect(clientOf!.session.list).toBeUndefined()
  expect(clientOf!.config).toBeUndefined()
  const output = { messages: [] as Array<MessageWithParts> }
  await remote.hooks["experimental.chat.messages.transform"]({}, output)
  expect(thisSeen).toBe(session)
  expect(output.messages.map((m) => m.info.id)).toEqual(["ses-ses_1"])
})

it("hands a tool's definition over as its JSON Schema, once while OpenCode passes the same objects, without waiting", async () => {
  const received: Array<unknown> = []
  const { hooks, pending } = await over({
    "tool.definition": async (input, output) => {
      received.push({ toolID: input.toolID, ...output })
    },
    "experimental.compaction.autocontinue": async () => undefined,
  })
  // A call after the definitions: the port keeps them before it, so they have reached the worker when it answers.
  const flushed = () => hooks["experimental.compaction.autocontinue"]({ sessionID: "ses_1" }, { enabled: true })
  const parameters = z.object({ filePath: z.string() })
  const output = { description: "Reads a file.", parameters }
  await hooks["tool.definition"]({ toolID: "read" }, output)
  // OpenCode awaits each definition: nothing waits for the worker.
  expect(pending()).toBe(0)
  await hooks["tool.definition"]({ toolID: "read" }, output)
  await flushed()
  expect(received).toEqual([{ toolID: "read", description: "Reads a file.", jsonSchema: z.toJSONSchema(parameters) }])
  // A changed definition crosses again; OpenCode's JSON Schema, when it gives one, as it is.
  const jsonSchema = { type: "object" }
  await hooks["tool.definition"]({ toolID: "read" }, { description: "Reads.", parameters, jsonSchema })
  await flushed()
  expect(received.at(-1)).toEqual({ toolID: "read", description: "Reads.", jsonSchema })
  // What cannot be converted crosses as its description: counted as its name and description, as on one thread.
  expect(
    Thread.portableDefinition({
      description: "d",
      parameters: {
        toJSONSchema: () => {
          throw new Error("no")
        },
      },
    }),
  ).toEqual({
    description: "d",
  })
})

it("runs the tools on the worker, and answers a tool's fallback when the worker cannot", async () => {
  const { hooks, remote } = await over({
    tool: {
      context_recall: {
        description: "",
        args: {},
        execute: async (args: { id: string }, context) => `${args.id} of ${context.sessionID}`,
      },
    },
  })
  const context = { sessionID: "ses_1", messageID: "msg_1", abort: new AbortController().signal } as never
  expect(await hooks.tool.context_recall!.execute({ id: "prt_1" }, context)).toBe("prt_1 of ses_1")
  remote.gone(new Error("it exited with code 1"))
  expect(await hooks.tool.context_recall!.execute({ id: "prt_1" }, context)).toContain("unavailable right now")
})

it("leaves OpenCode's objects as they were when the worker is gone, and holds OpenCode's process only while a call waits", async () => {
  let release: () => void = () => undefined
  const { hooks, remote, pending } = await over({
    "experimental.chat.system.transform": async (_input, output) => {
      await new Promise<void>((resolve) => {
        release = resolve
      })
      output.system.push("late")
    },
  })
  expect(pending()).toBe(0)
  const system = ["You are opencode."]
  const call = hooks["experimental.chat.system.transform"](
    { sessionID: "ses_1", model: { id: "m", providerID: "p" } },
    { system },
  )
  await new Promise((resolve) => setTimeout(resolve, 20))
  expect(pending()).toBe(1)
  remote.gone(new Error("it exited with code 1"))
  await call
  expect(system).toEqual(["You are opencode."])
  expect(pending()).toBe(0)
  release()
  await hooks["experimental.chat.system.transform"](
    { sessionID: "ses_1", model: { id: "m", providerID: "p" } },
    { system },
  )
  expect(system).toEqual(["You are opencode."])
})
