/**
 * The detectors' acceptance rules, each at the input where its answer changes (issue 18, mutation run of lines
 * 181–544): which names hold secrets, which literals bound to them are secrets, where an assignment is a comparison
 * or a path, and how overlapping findings and later passes settle. Each case is a text a session can hold: either a
 * secret that must go, or ordinary code that must stay as it is (redacting code breaks the session).
 */
import { describe, expect, it } from "vitest"
import * as Redaction from "../src/Redaction.ts"

// Secrets are assembled from pieces so that this file itself does not look like it leaks credentials.
const join = (...pieces: ReadonlyArray<string>) => pieces.join("")
const GITHUB = join("ghp_", "0123456789abcdefghijABCDEFGHIJ012345")
const OPENAI = join("sk-", "proj-", "Q7fz0xK2mW9bL4tR8vN1cY6hJ3pD5sA0eG2iU7")
const AWS_ID = join("AKIA", "Z3QX7EXAMPLE4KEY")

/** What was redacted, as kind and original text, in order. */
const found = (text: string) => Redaction.redact(text).redactions.map((r) => [r.kind, text.slice(r.start, r.end)])

const redacts = (text: string, kind: Redaction.Kind, secret: string) =>
  it(`redacts ${JSON.stringify(secret)} in ${JSON.stringify(text)} as ${kind}`, () => {
    expect(found(text)).toEqual([[kind, secret]])
    expect(Redaction.redact(text).text).not.toContain(secret)
  })

const keeps = (text: string) =>
  it(`keeps ${JSON.stringify(text)}`, () => {
    const result = Redaction.redact(text)
    expect(result.redactions).toEqual([])
    expect(result.text).toBe(text)
  })

describe("secret names", () => {
  it("a name with both aws and secret is an AWS secret key, also without 'access'", () => {
    expect(Redaction.secretName("AWS_SECRET_KEY")).toEqual({ kind: "aws-secret-key", class: "password" })
    expect(Redaction.secretName("aws_secret")).toEqual({ kind: "aws-secret-key", class: "password" })
    expect(Redaction.secretName("DB_SECRET")).toEqual({ kind: "env-secret", class: "password" })
  })

  it("an upper-case name ending in PASS holds a password; in lower case, `pass` is code", () => {
    expect(Redaction.secretName("DB_PASS")).toEqual({ kind: "env-secret", class: "password" })
    expect(Redaction.secretName("db_pass")).toBeUndefined()
    expect(Redaction.secretName("pass")).toBeUndefined()
  })

  it("an upper-case name is a secret only for its words: DB_USER and BUILD_MODE are not", () => {
    expect(Redaction.secretName("DB_USER")).toBeUndefined()
    expect(Redaction.secretName("BUILD_STAGE")).toBeUndefined()
  })

  it("an upper-case name ending in KEY is a secret whatever qualifies it; in code only a known qualifier makes one", () => {
    expect(Redaction.secretName("STRIPE_KEY")).toEqual({ kind: "env-secret", class: "password" })
    expect(Redaction.secretName("stripeKey")).toBeUndefined()
    expect(Redaction.secretName("signingKey")).toEqual({ kind: "secret-assignment", class: "token" })
  })

  it("a name spelled AWSSecretAccessKey is an AWS secret key judged as a token name", () => {
    expect(Redaction.secretName("AWSSecretAccessKey")).toEqual({ kind: "aws-secret-key", class: "token" })
  })
})

describe("secret names in text", () => {
  redacts("AWS_SECRET_KEY=wJalrXUtnFEMIK7MDENG", "aws-secret-key", "wJalrXUtnFEMIK7MDENG")
  redacts("DB_PASS=hunter2", "env-secret", "hunter2")
  redacts("STRIPE_KEY=abcdefghij", "env-secret", "abcdefghij")
  keeps('const steps = [{ pass: "lint" }, { pass: "test" }]')
  keeps("DB_USER=admin\nBUILD_STAGE=release2024")
})

describe("literals bound to secret names", () => {
  // Passwords take any quoted literal of 3 characters or more.
  redacts('password: "abc"', "secret-assignment", "abc")
  redacts('password: "hunter"', "secret-assignment", "hunter")
  keeps('password: "ab"')
  // So does an AWS secret key's name, though it reads as a token name.
  redacts('{"AWSSecretAccessKey": "abc/def"}', "aws-secret-key", "abc/def")
  // Token names take quoted literals of 8 characters or more that mix character classes.
  redacts('apiKey: "Abc12345"', "secret-assignment", "Abc12345")
  keeps('apiKey: "Abc1234"')
  keeps('apiKey: "your-api-key-here"')
  // Unquoted identifiers are references unless they hold digits and letters and are 8 long.
  redacts("token: abcd1234", "secret-assignment", "abcd1234")
  keeps("token: abcd123")
  keeps("token: _12345678")
  // Other unquoted literals must be 8 long and mix classes; an identifier rule would want a digit.
  redacts("api_key: AbCdEfGh-IjKl", "secret-assignment", "AbCdEfGh-IjKl")
  redacts("token: Abc-1234", "secret-assignment", "Abc-1234")
  keeps("token: Ab1-x")
  // A template literal is a quoted literal too.
  redacts("const password = `s3cret-Pass`", "secret-assignment", "s3cret-Pass")
})

describe("assignments, comparisons and paths", () => {
  // JSON written without spaces is still an assignment.
  redacts('{"password":"hunter22"}', "secret-assignment", "hunter22")
  // `==` compares and `::` names a path: neither binds a value.
  keeps("if api_key==expected_key1: pass")
  keeps("use auth::token::V2Handler;")
  // After a space, a value may start with ':' and after '=' with no space, too; after ':=', with '='.
  redacts("password: :hunter22", "secret-assignment", ":hunter22")
  redacts("DB_PASSWORD=:hunter22", "env-secret", ":hunter22")
  redacts("api_key:==Abcd12345", "secret-assignment", "=Abcd12345")
  // Only NAME=value with no spaces is a .env line, which takes any literal; code binding a variable is kept.
  redacts("API_TOKEN=token", "env-secret", "token")
  keeps("API_TOKEN = token")
  keeps("API_TOKEN =token")
  keeps("API_TOKEN= token")
  keeps("const config = {API_TOKEN:token,DEBUG:false}")
})

describe("prefixed keys judged on their body", () => {
  // The prefix's own lowercase letters do not make a one-class body mixed.
  keeps(`build sk-${"ABCDEFGHIJKLMNOPQRSTUVWX"} done`)
  keeps(`model hf_${"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ"} done`)
  // A Slack token holds a digit: a documentation placeholder does not.
  keeps("a bot token looks like xoxb-your-bot-token-here")
  redacts("token xoxb-your-bot-token-2", "slack-token", "xoxb-your-bot-token-2")
})

describe("overlapping findings and later passes", () => {
  it("a token inside a .env value is reported once, over the whole value, as the more specific kind", () => {
    const text = `GIT_CREDENTIALS=x-access-token:${GITHUB}`
    expect(Redaction.redact(text)).toEqual({
      text: "GIT_CREDENTIALS=[REDACTED:github-token]",
      redactions: [{ kind: "github-token", start: 16, end: text.length }],
    })
  })

  it("a key exposed by a later pass that ends where another redaction starts keeps its own end", () => {
    const key = join(
      "-----BEGIN RSA ",
      "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq3X9zN0aJpZs1mQe4Y\n-----END RSA ",
      "PRIVATE KEY-----",
    )
    // The END line's dashes hide the OpenAI key until the block is replaced; the AWS id is found at once.
    const text = `${key}${OPENAI}-${AWS_ID}`
    const out = Redaction.redact(text)
    expect(out.text).toBe("[REDACTED:private-key][REDACTED:openai-key][REDACTED:aws-access-key-id]")
    expect(out.redactions.map((r) => [r.kind, text.slice(r.start, r.end)])).toEqual([
      ["private-key", key],
      ["openai-key", `${OPENAI}-`],
      ["aws-access-key-id", AWS_ID],
    ])
  })
})

describe("existing markers", () => {
  // A marker of any kind, also one another tool wrote whose kind text reads like a token, is never redacted again.
  it("a marker whose kind reads like a token stays, first or after other markers, and secrets around it go", () => {
    const first = "[REDACTED:xoxp-user-token-1]"
    const text = `${first} [REDACTED:jwt] ${GITHUB} [REDACTED:jwt] [REDACTED:xoxp-user-token-2] end`
    const out = Redaction.redact(text)
    expect(out.text).toBe(
      "[REDACTED:xoxp-user-token-1] [REDACTED:jwt] [REDACTED:github-token] [REDACTED:jwt] [REDACTED:xoxp-user-token-2] end",
    )
    expect(out.redactions).toEqual([{ kind: "github-token", start: 44, end: 44 + GITHUB.length }])
  })

  it("a single marker whose kind reads like a token stays", () => {
    expect(Redaction.redact("[REDACTED:xoxp-user-token-1]").redactions).toEqual([])
  })
})

describe("assignments glued to the value before them", () => {
  // An unquoted value runs up to the quote of the next name, which its last character hid from the name rule until the
  // value was replaced: one more pass a secret, so the ninth of such a run was left in plain text after 8 passes.
  it("every secret of 9 and of 12 glued assignments is redacted", () => {
    for (const count of [9, 12]) {
      const text = '"password":abc12345'.repeat(count)
      const result = Redaction.redact(text)
      expect(result.text).toBe('"password":[REDACTED:secret-assignment]'.repeat(count))
      expect(result.redactions).toHaveLength(count)
    }
  })

  it("1 MB of glued assignments is redacted whole, in linear time", () => {
    const unit = "'token':Abc12345"
    const text = unit.repeat(Math.ceil(1_000_000 / unit.length))
    const result = Redaction.redact(text)
    expect(result.redactions).toHaveLength(text.length / unit.length)
    expect(result.text).not.toContain("Abc12345")
  })
})
