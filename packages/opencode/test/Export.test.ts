import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { decode, parseExportText } from "../src/Export.ts"
import { formatPath } from "../src/ImportError.ts"
import { fixture } from "./support/fixtures.ts"

const failure = <A, E>(result: Result.Result<A, E>): E => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure
}

describe("parseExportText", () => {
  it("given plain JSON, then it is parsed as is", () => {
    expect(parseExportText('{"info": {}, "messages": []}')).toEqual(Result.succeed({ info: {}, messages: [] }))
  })

  it("given a byte order mark, blank lines and several progress lines before the JSON, then they are skipped", () => {
    const text = '\uFEFFExporting session: ses_a\nwarning: something\n\n  {"messages": []}\n'
    expect(parseExportText(text)).toEqual(Result.succeed({ messages: [] }))
  })

  it("given a syntax error after a prefix line, then the line number counts the prefix line", () => {
    const error = failure(parseExportText('Exporting session: ses_a\n{\n  "info": {,\n}'))
    expect(error.path).toBe("line 3, column 12")
    expect(error.reason).toBe("not valid JSON (Expected property name or '}')")
  })

  it("given an invalid token V8 reports without a position, then the error still says what is wrong", () => {
    const error = failure(parseExportText('{"a": nope}'))
    expect(error.path).toBe("")
    expect(error.message).toBe("Invalid OpenCode export: not valid JSON (Unexpected token 'o')")
  })
})

describe("decode", () => {
  it("given unknown extra keys everywhere, then they are stripped and the known fields kept", () => {
    const raw = fixture("shell-command.json")
    raw.messages[1]!.parts[0]!.extra = 1
    const decoded = decode(raw)
    expect(Result.isSuccess(decoded)).toBe(true)
    if (Result.isSuccess(decoded)) {
      const part = decoded.success.messages[1]!.parts[0]!
      expect(part).not.toHaveProperty("extra")
      expect(part).toMatchObject({ type: "tool", callID: "call_shell", tool: "bash" })
    }
  })

  it("given an unknown part type, then it decodes as an OtherPart with its type", () => {
    const raw = fixture("shell-command.json")
    raw.messages[1]!.parts.push({ type: "future-part", id: "prt_x", payload: [1, 2] })
    const decoded = decode(raw)
    expect(Result.isSuccess(decoded) && decoded.success.messages[1]!.parts[1]).toEqual({
      type: "future-part",
      id: "prt_x",
    })
  })
})

describe("formatPath", () => {
  it("writes paths the way a reader writes them", () => {
    expect(formatPath(["messages", 3, "parts", 1, "state", "status"])).toBe("messages[3].parts[1].state.status")
    expect(formatPath([])).toBe("")
    expect(formatPath(["metadata", "odd key"])).toBe('metadata["odd key"]')
  })
})
