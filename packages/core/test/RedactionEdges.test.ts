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

  it("a secret before an existing marker is found, and one between two markers", () => {
    const github = ["ghp_", "0123456789abcdefghijABCDEFGHIJ012345"].join("")
    const before = Redaction.redact(`${github} [REDACTED:jwt]`)
    expect(before.text).toBe("[REDACTED:github-token] [REDACTED:jwt]")
    expect(before.redactions).toEqual([{ kind: "github-token", start: 0, end: github.length }])
    const between = Redaction.redact(`[REDACTED:jwt] ${github} [REDACTED:jwt]`)
    expect(between.text).toBe("[REDACTED:jwt] [REDACTED:github-token] [REDACTED:jwt]")
    expect(between.redactions).toEqual([{ kind: "github-token", start: 15, end: 15 + github.length }])
  })

  it("a secret a redaction exposes, found in a later pass before another redaction, maps back to its offsets", () => {
    const key = [
      "-----BEGIN RSA ",
      "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq3X9zN0aJpZs1mQe4Y\n-----END RSA ",
      "PRIVATE KEY-----",
    ].join("")
    const openai = ["sk-", "proj-", "Q7fz0xK2mW9bL4tR8vN1cY6hJ3pD5sA0eG2iU7"].join("")
    const github = ["ghp_", "0123456789abcdefghijABCDEFGHIJ012345"].join("")
    // The END line's dashes hide the key's start until the block is replaced (pass two), left of GitHub's marker.
    const text = `${key}${openai} and ${github}`
    const out = Redaction.redact(text)
    expect(out.text).toBe("[REDACTED:private-key][REDACTED:openai-key] and [REDACTED:github-token]")
    expect(out.redactions.map((r) => [r.kind, text.slice(r.start, r.end)])).toEqual([
      ["private-key", key],
      ["openai-key", openai],
      ["github-token", github],
    ])
  })
})
