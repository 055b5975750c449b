/**
 * The detectors at the edges of their rules (issue 18, mutation run): what a name's words, case and a value's
 * character classes decide, each at the boundary where the answer changes.
 */
import { describe, expect, it } from "vitest"
import * as Redaction from "../src/Redaction.ts"

const kinds = (text: string) => Redaction.redact(text).redactions.map((r) => r.kind)

describe("Redaction: names and values at the edges", () => {
  it("a bearer token must mix character classes: capitals alone, or lowercase alone, are prose", () => {
    expect(kinds("Authorization: Bearer ABCDEFGHIJKLMNOP")).toEqual([])
    expect(kinds("Authorization: Bearer abcdefghijklmnop")).toEqual([])
    expect(kinds("Authorization: Bearer 1234567890123456")).toEqual([])
    expect(kinds("Authorization: Bearer abcdefgh12345678")).toEqual(["bearer-token"])
    expect(kinds("Authorization: Bearer ABCDEFGH12345678")).toEqual(["bearer-token"])
    expect(kinds("Authorization: Bearer ABCDEFGHijklmnop")).toEqual(["bearer-token"])
  })

  it("a name's last word decides even when the name ends in a separator", () => {
    expect(Redaction.secretName("API_KEY_")).toEqual({ kind: "env-secret", class: "password" })
    expect(Redaction.secretName("_token")).toEqual({ kind: "secret-assignment", class: "token" })
    expect(kinds("API_KEY_=Abcdef123456")).toEqual(["env-secret"])
  })

  it("an upper-case name is upper case from its first letter: myAPI_KEY is code, not a .env line", () => {
    expect(Redaction.secretName("myAPI_KEY")).toEqual({ kind: "secret-assignment", class: "token" })
    expect(Redaction.secretName("MY_API_KEY")).toEqual({ kind: "env-secret", class: "password" })
    expect(kinds("myAPI_KEY=Abcdef123456")).toEqual(["secret-assignment"])
  })
})
