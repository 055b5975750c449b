/**
 * Record-time redaction (`redactCommand`, `redactValue`) and the message fields the other redaction tests do not
 * reach (subtask prompts, file URLs, arrays inside tool states). Brought in by the mutation run (issue 18): each
 * command kind's text is redacted, its findings name the message, part and field, and a command without secrets is
 * answered as the same reference.
 */
import { describe, expect, it } from "vitest"
import type { Command } from "../src/Commands.ts"
import type { AssistantMessage, UserMessage } from "../src/Message.ts"
import * as Redaction from "../src/Redaction.ts"
import { assistant, messageId, partId, tool, user } from "./support/arbitraries.ts"

const join = (...pieces: ReadonlyArray<string>) => pieces.join("")
const GITHUB = join("ghp_", "0123456789abcdefghijABCDEFGHIJ012345")
const STRIPE = join("sk_", "live_", "4eC39HqLyjWDarjtT1zdp7dc")
const HIDDEN_GITHUB = Redaction.marker("github-token")
const HIDDEN_STRIPE = Redaction.marker("stripe-key")

const MARKER = messageId(9)
const TOKENS = { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
const MODEL = { providerId: "p", modelId: "m" }
const LIMITS = { context: 1000, output: 100 }
const CONFIG = {}

const redacted = <C extends Command>(command: C) => Redaction.redactCommand(command)

describe("Redaction.redactCommand", () => {
  it("StartSession: the title is redacted with a finding naming no message; without a title or a secret it is the same command", () => {
    const start = { _tag: "StartSession", sessionId: "ses_1", at: 0, title: `deploy with ${GITHUB}` } as Command
    const out = redacted(start)
    expect(out.command).toEqual({ ...start, title: `deploy with ${HIDDEN_GITHUB}` })
    expect(out.findings).toStrictEqual([{ field: "title", kind: "github-token" }])
    const untitled = { _tag: "StartSession", sessionId: "ses_1", at: 0 } as Command
    expect(redacted(untitled).command).toBe(untitled)
    expect(redacted(untitled).findings).toEqual([])
    const plain = { _tag: "StartSession", sessionId: "ses_1", at: 0, title: "a plain title" } as Command
    expect(redacted(plain).command).toBe(plain)
    expect(redacted(plain).findings).toEqual([])
  })

  it("AddUserMessage and RecordAssistantStep: the message is redacted, findings name the message and part", () => {
    const message = user(1, `token ${GITHUB}`)
    const add = { _tag: "AddUserMessage", message } as Command
    const out = redacted(add)
    expect((out.command as { message: UserMessage }).message.parts[0]).toMatchObject({ text: `token ${HIDDEN_GITHUB}` })
    expect(out.findings).toStrictEqual([
      { messageId: message.id, partId: message.parts[0]!.id, field: "text", kind: "github-token" },
    ])
    const step = {
      _tag: "RecordAssistantStep",
      message: assistant(2, 1, [{ type: "text", id: partId(5), text: `use ${STRIPE}` }]),
    } as Command
    const stepOut = redacted(step)
    expect((stepOut.command as { message: AssistantMessage }).message.parts[0]).toMatchObject({
      text: `use ${HIDDEN_STRIPE}`,
    })
    expect(stepOut.findings).toStrictEqual([
      { messageId: messageId(2), partId: partId(5), field: "text", kind: "stripe-key" },
    ])
    for (const same of [
      { _tag: "AddUserMessage", message: user(3, "hello") },
      { _tag: "RecordAssistantStep", message: assistant(4, 3, [{ type: "text", id: partId(6), text: "hi" }]) },
    ] as ReadonlyArray<Command>) {
      expect(redacted(same).command).toBe(same)
      expect(redacted(same).findings).toEqual([])
    }
  })

  it("ReportProviderError: the error and the message are redacted apart; either one alone makes a new command", () => {
    const message = assistant(2, 1, [])
    const withError = {
      _tag: "ReportProviderError",
      at: 0,
      message,
      error: { name: "APIError", message: `bad key ${STRIPE}` },
    } as Command
    const out = redacted(withError)
    expect(out.command).toEqual({ ...withError, error: { name: "APIError", message: `bad key ${HIDDEN_STRIPE}` } })
    expect((out.command as { message: AssistantMessage }).message).toBe(message)
    expect(out.findings).toStrictEqual([{ messageId: message.id, field: "error.message", kind: "stripe-key" }])
    const secretMessage = assistant(2, 1, [{ type: "text", id: partId(7), text: GITHUB }])
    const withMessage = {
      _tag: "ReportProviderError",
      at: 0,
      message: secretMessage,
      error: { name: "APIError", message: "overloaded" },
    } as Command & { error: unknown }
    const out2 = redacted(withMessage)
    expect((out2.command as { message: AssistantMessage }).message.parts[0]).toMatchObject({ text: HIDDEN_GITHUB })
    expect((out2.command as { error: unknown }).error).toBe(withMessage.error)
    expect(out2.findings).toStrictEqual([
      { messageId: secretMessage.id, partId: partId(7), field: "text", kind: "github-token" },
    ])
    const clean = {
      _tag: "ReportProviderError",
      at: 0,
      message,
      error: { name: "E", message: "overloaded" },
    } as Command
    expect(redacted(clean).command).toBe(clean)
  })

  it("RecordToolResult: the state is redacted with the call's message and part in each finding", () => {
    const result = {
      _tag: "RecordToolResult",
      at: 0,
      messageId: messageId(2),
      partId: partId(3),
      state: { status: "completed", input: { args: ["--token", GITHUB] }, output: "ok", title: "t" },
    } as Command
    const out = redacted(result)
    expect((out.command as { state: unknown }).state).toEqual({
      status: "completed",
      input: { args: ["--token", HIDDEN_GITHUB] },
      output: "ok",
      title: "t",
    })
    expect(out.findings).toStrictEqual([
      { messageId: messageId(2), partId: partId(3), field: "state.input.args[1]", kind: "github-token" },
    ])
    const clean = {
      ...result,
      state: { status: "completed", input: { args: ["a"] }, output: "ok", title: "t" },
    } as Command
    expect(redacted(clean).command).toBe(clean)
  })

  it("ProcessCompaction: the prompt and the plugin context are redacted; absent ones stay absent", () => {
    const base = {
      _tag: "ProcessCompaction",
      at: 0,
      markerId: MARKER,
      summaryId: messageId(10),
      model: MODEL,
      compactionLimits: LIMITS,
      config: CONFIG,
    }
    const both = { ...base, prompt: `summarise; key ${GITHUB}`, pluginContext: ["plain", `db ${STRIPE}`] } as Command
    const out = redacted(both)
    expect(out.command).toEqual({
      ...both,
      prompt: `summarise; key ${HIDDEN_GITHUB}`,
      pluginContext: ["plain", `db ${HIDDEN_STRIPE}`],
    })
    expect(out.findings).toStrictEqual([
      { messageId: MARKER, field: "prompt", kind: "github-token" },
      { messageId: MARKER, field: "pluginContext[1]", kind: "stripe-key" },
    ])
    const promptOnly = { ...base, prompt: `key ${GITHUB}` } as Command
    const promptOut = redacted(promptOnly)
    expect(promptOut.command).toStrictEqual({ ...base, prompt: `key ${HIDDEN_GITHUB}` })
    const contextOnly = { ...base, pluginContext: [`db ${STRIPE}`] } as Command
    const contextOut = redacted(contextOnly)
    expect(contextOut.command).toStrictEqual({ ...base, pluginContext: [`db ${HIDDEN_STRIPE}`] })
    const contextSecretPromptPlain = { ...base, prompt: "plain", pluginContext: [`db ${STRIPE}`] } as Command
    expect(redacted(contextSecretPromptPlain).command).toStrictEqual({
      ...base,
      prompt: "plain",
      pluginContext: [`db ${HIDDEN_STRIPE}`],
    })
    const promptSecretContextPlain = { ...base, prompt: GITHUB, pluginContext: ["plain"] } as Command
    expect(redacted(promptSecretContextPlain).command).toStrictEqual({
      ...base,
      prompt: HIDDEN_GITHUB,
      pluginContext: ["plain"],
    })
    for (const same of [base, { ...base, prompt: "plain", pluginContext: ["plain"] }] as ReadonlyArray<Command>) {
      expect(redacted(same).command).toBe(same)
      expect(redacted(same).findings).toEqual([])
    }
  })

  it("FinishSummary and FailSummary: the summary text and the summariser's error, found under the marker", () => {
    const finish = {
      _tag: "FinishSummary",
      at: 0,
      markerId: MARKER,
      partId: partId(1),
      text: `the key was ${GITHUB}`,
      tokens: TOKENS,
    } as Command
    const out = redacted(finish)
    expect(out.command).toEqual({ ...finish, text: `the key was ${HIDDEN_GITHUB}` })
    expect(out.findings).toStrictEqual([{ messageId: MARKER, field: "text", kind: "github-token" }])
    const fail = {
      _tag: "FailSummary",
      at: 0,
      markerId: MARKER,
      error: { name: "E", message: `rejected ${STRIPE}` },
    } as Command
    const failOut = redacted(fail)
    expect(failOut.command).toEqual({ ...fail, error: { name: "E", message: `rejected ${HIDDEN_STRIPE}` } })
    expect(failOut.findings).toStrictEqual([{ messageId: MARKER, field: "error.message", kind: "stripe-key" }])
    for (const same of [
      { ...finish, text: "plain summary" },
      { ...fail, error: { name: "E", message: "timeout" } },
    ] as ReadonlyArray<Command>) {
      expect(redacted(same).command).toBe(same)
      expect(redacted(same).findings).toEqual([])
    }
  })

  it("commands without text are answered unchanged", () => {
    const prune = { _tag: "Prune", at: 0 } as Command
    expect(redacted(prune).command).toBe(prune)
    expect(redacted(prune).findings).toEqual([])
  })
})

describe("Redaction.redactValue", () => {
  it("redacts strings however deep, in arrays and objects, naming each path; a clean value is the same reference", () => {
    const value = { a: [1, "plain", { b: `x ${GITHUB}` }], c: { api_key: "Abcdef123456" } }
    const out = Redaction.redactValue(value, "input")
    expect(out.value).toEqual({
      a: [1, "plain", { b: `x ${HIDDEN_GITHUB}` }],
      c: { api_key: "[REDACTED:secret-assignment]" },
    })
    expect(out.findings).toStrictEqual([
      { field: "input.a[2].b", kind: "github-token" },
      { field: "input.c.api_key", kind: "secret-assignment" },
    ])
    const clean = { a: [1, "plain", { b: "x" }] }
    expect(Redaction.redactValue(clean, "input").value).toBe(clean)
    expect(Redaction.redactValue(clean, "input").findings).toEqual([])
    const list = ["plain", "plain"]
    expect(Redaction.redactValue(list, "l").value).toBe(list)
    expect(Redaction.redactValue(["plain", GITHUB], "l").value).toEqual(["plain", HIDDEN_GITHUB])
    // An array whose only secret is not its last item is still a new array.
    expect(Redaction.redactValue([GITHUB, "plain"], "l").value).toEqual([HIDDEN_GITHUB, "plain"])
  })
})

describe("Redaction.redactMessages: subtasks and file URLs", () => {
  it("a subtask's prompt and description are redacted apart; a clean one keeps its identity", () => {
    const subtask = (prompt: string, description: string) =>
      ({
        role: "user",
        id: messageId(1),
        createdAt: 0,
        parts: [{ type: "subtask", id: partId(1), prompt, description, agent: "general" }],
      }) as unknown as UserMessage
    const both = Redaction.redactMessages([subtask(`use ${GITHUB}`, `with ${STRIPE}`)])
    expect(both.messages[0]!.parts[0]).toMatchObject({
      prompt: `use ${HIDDEN_GITHUB}`,
      description: `with ${HIDDEN_STRIPE}`,
    })
    expect(both.findings.map((f) => [f.field, f.kind])).toEqual([
      ["prompt", "github-token"],
      ["description", "stripe-key"],
    ])
    const promptOnly = Redaction.redactMessages([subtask(`use ${GITHUB}`, "plain")])
    expect(promptOnly.messages[0]!.parts[0]).toMatchObject({ prompt: `use ${HIDDEN_GITHUB}`, description: "plain" })
    const descriptionOnly = Redaction.redactMessages([subtask("plain", `with ${STRIPE}`)])
    expect(descriptionOnly.messages[0]!.parts[0]).toMatchObject({
      prompt: "plain",
      description: `with ${HIDDEN_STRIPE}`,
    })
    const clean = subtask("plain", "plain")
    expect(Redaction.redactMessages([clean]).messages[0]).toBe(clean)
  })

  it("a file URL carrying a secret is redacted in user and assistant messages; its other fields stay", () => {
    const url = `https://example.com/f.png?token=${GITHUB}`
    const file = { type: "file", id: partId(2), mime: "image/png", url, filename: "f.png" } as const
    const fromUser = Redaction.redactMessages([
      { role: "user", id: messageId(1), createdAt: 0, parts: [file] } as unknown as UserMessage,
    ])
    expect(fromUser.messages[0]!.parts[0]).toStrictEqual({ ...file, url: url.replace(GITHUB, HIDDEN_GITHUB) })
    const fromAssistant = Redaction.redactMessages([assistant(2, 1, [file])])
    expect(fromAssistant.messages[0]!.parts[0]).toStrictEqual({ ...file, url: url.replace(GITHUB, HIDDEN_GITHUB) })
    expect(fromAssistant.findings).toStrictEqual([
      { messageId: messageId(2), partId: partId(2), field: "url", kind: "github-token" },
    ])
  })

  it("a tool state's arrays are walked item by item with their index in the field", () => {
    const part = tool(3, "bash", "ok", { input: { argv: ["deploy", `--key=${STRIPE}`] } })
    const out = Redaction.redactMessages([assistant(2, 1, [part])])
    expect(out.findings).toStrictEqual([
      { messageId: messageId(2), partId: part.id, field: "state.input.argv[1]", kind: "stripe-key" },
    ])
    expect(JSON.stringify(out.messages)).not.toContain(STRIPE)
  })
})

describe("Redaction.redact: Basic auth", () => {
  it("Basic auth whose value is not base64, or decodes to no user:password, is left alone", () => {
    // Nine base64 characters cannot be decoded (atob throws).
    expect(Redaction.redact("Authorization: Basic abcdefghi").redactions).toEqual([])
    expect(Redaction.redact("Authorization: Basic Zm9vYmFyYmF6").redactions).toEqual([])
  })
})
