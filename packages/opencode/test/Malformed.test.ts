import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { importSession, importText } from "../src/Import.ts"
import type { ImportError } from "../src/ImportError.ts"
import { fixture, fixtureText } from "./support/fixtures.ts"

const refused = (result: Result.Result<unknown, ImportError>): ImportError => {
  expect(Result.isFailure(result)).toBe(true)
  if (Result.isSuccess(result)) throw new Error("expected the import to be refused")
  expect(result.failure._tag).toBe("ImportError")
  return result.failure
}

describe("malformed inputs are refused with the bad field's path, and nothing is returned", () => {
  it("given an export without `messages`, then the error names `messages`", () => {
    const error = refused(importText(fixtureText("malformed/missing-messages.json")))
    expect(error.path).toBe("messages")
    expect(error.message).toBe("Invalid OpenCode export at messages: required field is missing")
  })

  it("given a tool part with an unknown status, then the error names `messages[1].parts[1].state.status`", () => {
    const error = refused(importText(fixtureText("malformed/unknown-tool-status.json")))
    expect(error.path).toBe("messages[1].parts[1].state.status")
    expect(error.message).toBe(
      'Invalid OpenCode export at messages[1].parts[1].state.status: expected one of "pending", "running", "completed", "error", got "done"',
    )
  })

  it("given a completed tool whose output is not a string, then the error names `…state.output`", () => {
    const error = refused(importText(fixtureText("malformed/non-string-output.json")))
    expect(error.path).toBe("messages[1].parts[1].state.output")
    expect(error.message).toBe(
      "Invalid OpenCode export at messages[1].parts[1].state.output: expected string, got an object",
    )
  })

  it("given text that is not JSON, then the error names the line and column", () => {
    const error = refused(importText(fixtureText("malformed/invalid-json.txt")))
    expect(error.path).toBe("line 24, column 9")
    expect(error.message).toBe(
      "Invalid OpenCode export at line 24, column 9: not valid JSON (Expected ',' or '}' after property value)",
    )
  })

  it("given truncated JSON after the prefix line, then the position is the end of the text", () => {
    const text = fixtureText("exporting-prefix.txt")
    const error = refused(importText(text.slice(0, 40)))
    expect(error.path).toMatch(/^line \d+, column \d+$/)
    expect(error.reason).toMatch(/^not valid JSON/)
  })

  it("given no JSON object at all, then the error says so", () => {
    expect(refused(importText("Exporting session: ses_x\n")).message).toBe(
      "Invalid OpenCode export: no JSON object found (expected `{ info, messages }`)",
    )
  })

  const cases: ReadonlyArray<readonly [string, string, string, (raw: any) => void]> = [
    [
      "a message without role",
      "messages[0].info.role",
      "required field is missing",
      (r: any) => delete r.messages[0].info.role,
    ],
    [
      "an unknown role",
      "messages[0].info.role",
      'expected one of "user", "assistant", got "system"',
      (r: any) => (r.messages[0].info.role = "system"),
    ],
    [
      "a part without type",
      "messages[1].parts[0].type",
      "required field is missing",
      (r: any) => delete r.messages[1].parts[0].type,
    ],
    [
      "a part that is not an object",
      "messages[1].parts[0]",
      'expected an object, got "step"',
      (r: any) => (r.messages[1].parts[0] = "step"),
    ],
    [
      "a negative token count",
      "messages[1].info.tokens.input",
      "got -1",
      (r: any) => (r.messages[1].info.tokens.input = -1),
    ],
    [
      "a string creation time",
      "messages[0].info.time.created",
      'got "yesterday"',
      (r: any) => (r.messages[0].info.time.created = "yesterday"),
    ],
    [
      "an assistant without parentID",
      "messages[1].info.parentID",
      "required field is missing",
      (r: any) => delete r.messages[1].info.parentID,
    ],
    ["a message id without its prefix", "messages[0].info.id", 'got "01"', (r: any) => (r.messages[0].info.id = "01")],
    ["a session id without its prefix", "info.id", 'got "abc"', (r: any) => (r.info.id = "abc")],
    [
      "tool input that is not an object",
      "messages[1].parts[0].state.input",
      'got "make"',
      (r: any) => (r.messages[1].parts[0].state.input = "make"),
    ],
    [
      "a text part whose text is missing",
      "messages[0].parts[0].text",
      "required field is missing",
      (r: any) => delete r.messages[0].parts[0].text,
    ],
    ["messages that are not an array", "messages", "got an object", (r: any) => (r.messages = {})],
  ]
  it.each(cases)("given %s, then the error names %s", (_, path, reason, corrupt) => {
    const raw = fixture("shell-command.json")
    corrupt(raw)
    const error = refused(importSession(raw))
    expect(error.path).toBe(path)
    expect(error.reason).toContain(reason)
    expect(error.message).toContain(path)
  })

  it("given a reused message id, then the error names the second message's id", () => {
    const raw = fixture("shell-command.json")
    raw.messages[3]!.info.id = "msg_01"
    const error = refused(importSession(raw))
    expect(error.message).toBe(
      "Invalid OpenCode export at messages[3].info.id: message id msg_01 is already used by messages[0]",
    )
  })

  it("given a reused part id inside a message, then the error names the part", () => {
    const raw = fixture("shell-command.json")
    raw.messages[3]!.parts[1]!.id = raw.messages[3]!.parts[0]!.id
    expect(refused(importSession(raw)).path).toBe("messages[3].parts[1].id")
  })

  it("given input that is not an object, then the error covers the whole input", () => {
    const error = refused(importSession([1, 2]))
    expect(error.message).toMatch(/^Invalid OpenCode export/)
  })
})
