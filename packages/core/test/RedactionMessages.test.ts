/**
 * Message and value redaction at its edges (issue 18, mutation run): inline media is never scanned (and only data
 * URLs that really are inline base64), values shared or cyclic are walked safely, and a message or command changes
 * only in the field that held a secret — no key appears that was not there.
 */
import { describe, expect, it } from "vitest"
import type { Command } from "../src/Commands.ts"
import type { AssistantMessage, UserMessage } from "../src/Message.ts"
import * as Redaction from "../src/Redaction.ts"
import { assistant, messageId, partId, user } from "./support/arbitraries.ts"

const join = (...pieces: ReadonlyArray<string>) => pieces.join("")
const GITHUB = join("ghp_", "0123456789abcdefghijABCDEFGHIJ012345")
const AWS_ID = join("AKIA", "Z3QX7EXAMPLE4KEY")
const HIDDEN_GITHUB = Redaction.marker("github-token")

const fileMessage = (url: string) =>
  assistant(2, 1, [{ type: "file", id: partId(3), mime: "image/png", url }]) as AssistantMessage
const urlOf = (url: string) => {
  const out = Redaction.redactMessages([fileMessage(url)]).messages[0] as AssistantMessage
  return (out.parts[0] as { url: string }).url
}

describe("inline media is not scanned", () => {
  it("a base64 data URL is left whole, even when its bytes read like a key", () => {
    const url = `data:image/png;base64,${AWS_ID}+abc`
    expect(urlOf(url)).toBe(url)
    const message = fileMessage(url)
    expect(Redaction.redactMessages([message]).messages[0]).toBe(message)
  })

  it("what is not inline base64 is scanned: a data URL without ;base64, a ;base64 string that is no data URL", () => {
    expect(urlOf(`data:text/plain,${AWS_ID}+abc`)).toBe("data:text/plain,[REDACTED:aws-access-key-id]+abc")
    expect(urlOf(`image/png;base64,${AWS_ID}+abc`)).toBe("image/png;base64,[REDACTED:aws-access-key-id]+abc")
    expect(urlOf(`see data:image/png;base64,${AWS_ID}+abc`)).toBe(
      "see data:image/png;base64,[REDACTED:aws-access-key-id]+abc",
    )
    // A data URL without a comma has no data part.
    expect(urlOf(`data:image/png;base64;${AWS_ID}`)).toBe("data:image/png;base64;[REDACTED:aws-access-key-id]")
    expect(urlOf(`data:${GITHUB};base64x`)).toBe(`data:${HIDDEN_GITHUB};base64x`)
  })

  it("the header before the comma is at most 299 characters", () => {
    const header = (length: number) => `data:image/png;${"x".repeat(length - "data:image/png;;base64".length)};base64`
    const at299 = `${header(299)},${AWS_ID}+abc`
    expect(at299.indexOf(",")).toBe(299)
    expect(urlOf(at299)).toBe(at299)
    const at300 = `${header(300)},${AWS_ID}+abc`
    expect(at300.indexOf(",")).toBe(300)
    expect(urlOf(at300)).toContain("[REDACTED:aws-access-key-id]")
  })
})

describe("values: shared, cyclic, and not text", () => {
  it("an object shown twice is redacted in both places", () => {
    const shared = { note: `token ${GITHUB}` }
    const out = Redaction.redactValue({ a: shared, b: [shared] }, "v")
    expect(out.value).toEqual({ a: { note: `token ${HIDDEN_GITHUB}` }, b: [{ note: `token ${HIDDEN_GITHUB}` }] })
    expect(out.findings.map((f) => f.field)).toEqual(["v.a.note", "v.b[0].note"])
  })

  it("a cycle is walked once: the secret is redacted and the walk ends", () => {
    const cyclic: Record<string, unknown> = { note: `token ${GITHUB}` }
    cyclic.self = cyclic
    const out = Redaction.redactValue(cyclic, "v")
    expect((out.value as Record<string, unknown>).note).toBe(`token ${HIDDEN_GITHUB}`)
    expect(out.findings).toEqual([{ field: "v.note", kind: "github-token" }])
  })

  it("an undefined field (a value built in memory, not read from JSON) passes as it is", () => {
    const value = { note: undefined, list: [undefined, "plain"] }
    const out = Redaction.redactValue(value, "v")
    expect(out.value).toBe(value)
    expect(out.findings).toEqual([])
  })

  it("numbers, booleans and nulls pass as they are, under secret-looking names too", () => {
    const value = { password: 12345678, token: null, secret: true, n: 1, list: [null, 2, false] }
    const out = Redaction.redactValue(value, "v")
    expect(out.value).toBe(value)
    expect(out.findings).toEqual([])
  })
})

describe("a message changes only where the secret was", () => {
  it("a secret only in a user's system prompt is redacted, with a finding that has no part", () => {
    const message = user(1, "hello", { system: `use ${GITHUB}` })
    const out = Redaction.redactMessages([message])
    expect(out.messages[0]).toStrictEqual({ ...message, system: `use ${HIDDEN_GITHUB}` })
    expect(out.findings).toStrictEqual([{ messageId: message.id, field: "system", kind: "github-token" }])
  })

  it("a user message without a system prompt gets no system key", () => {
    const message = user(1, `use ${GITHUB}`)
    const out = Redaction.redactMessages([message]).messages[0] as UserMessage
    expect(Object.hasOwn(out, "system")).toBe(false)
    expect(out.parts[0]).toMatchObject({ text: `use ${HIDDEN_GITHUB}` })
  })

  it("a secret only in an assistant's error is redacted; an assistant without an error gets no error key", () => {
    const failed = assistant(2, 1, [{ type: "text", id: partId(4), text: "hi" }], {
      error: { name: "APIError", message: `bad ${GITHUB}` },
    })
    const out = Redaction.redactMessages([failed])
    expect(out.messages[0]).toStrictEqual({ ...failed, error: { name: "APIError", message: `bad ${HIDDEN_GITHUB}` } })
    expect(out.findings).toStrictEqual([{ messageId: failed.id, field: "error.message", kind: "github-token" }])
    const fine = assistant(3, 1, [{ type: "text", id: partId(5), text: `use ${GITHUB}` }])
    const fineOut = Redaction.redactMessages([fine]).messages[0]!
    expect(Object.hasOwn(fineOut, "error")).toBe(false)
    expect(fineOut).toStrictEqual({ ...fine, parts: [{ type: "text", id: partId(5), text: `use ${HIDDEN_GITHUB}` }] })
  })

  it("a user's file URL holding a secret is found under the field url", () => {
    const message = {
      role: "user",
      id: messageId(1),
      createdAt: 0,
      parts: [{ type: "file", id: partId(6), mime: "image/png", url: `https://x.test/a.png?t=${GITHUB}` }],
    } as unknown as UserMessage
    expect(Redaction.redactMessages([message]).findings).toStrictEqual([
      { messageId: message.id, partId: partId(6), field: "url", kind: "github-token" },
    ])
  })
})

describe("a command changes only where the secret was", () => {
  it("AddUserMessage and RecordAssistantStep carry only the redacted message (no other key appears)", () => {
    const message = user(1, `use ${GITHUB}`)
    const add = { _tag: "AddUserMessage", message } as Command
    expect(Redaction.redactCommand(add).command).toStrictEqual({
      _tag: "AddUserMessage",
      message: { ...message, parts: [{ ...message.parts[0]!, text: `use ${HIDDEN_GITHUB}` }] },
    })
    const step = assistant(2, 1, [{ type: "text", id: partId(7), text: `use ${GITHUB}` }])
    const record = { _tag: "RecordAssistantStep", message: step } as Command
    expect(Redaction.redactCommand(record).command).toStrictEqual({
      _tag: "RecordAssistantStep",
      message: { ...step, parts: [{ type: "text", id: partId(7), text: `use ${HIDDEN_GITHUB}` }] },
    })
  })
})
