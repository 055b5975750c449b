import { describe, expect, it } from "vitest"
import * as Redaction from "../src/Redaction.ts"
import { SAMPLES } from "./support/secrets.ts"

// Given/when/then at each detector's boundary: one character short of its minimum, exactly it, one more.

/** `count` characters cycling through a mixed-case, digit-bearing alphabet (random-looking). */
const mixed = (count: number): string => {
  const alphabet = "aB3cD5eF7gH9iJ2kL4mN6pQ8rS0tU1vW"
  let out = ""
  for (let i = 0; i < count; i++) out += alphabet[i % alphabet.length]
  return out
}

/** `count` lowercase letters, no digits: the body only the long-run rule accepts. */
const lower = (count: number): string => {
  const alphabet = "abcdefghijklmnopqrstuvwxyz"
  let out = ""
  for (let i = 0; i < count; i++) out += alphabet[i % alphabet.length]
  return out
}

const kindsIn = (text: string): ReadonlyArray<string> => Redaction.redact(text).redactions.map((r) => r.kind)

const boundary = (
  name: string,
  min: number,
  build: (length: number) => { readonly text: string; readonly secret: string },
  kind: Redaction.Kind,
) =>
  describe(`${name}: minimum ${min}`, () => {
    it(`given ${min - 1} characters, when redacted, then it is left alone`, () => {
      const { text, secret } = build(min - 1)
      expect(Redaction.redact(text).text).toContain(secret)
      expect(kindsIn(text)).not.toContain(kind)
    })
    for (const length of [min, min + 1]) {
      it(`given ${length} characters, when redacted, then it becomes ${Redaction.marker(kind)}`, () => {
        const { text, secret } = build(length)
        const result = Redaction.redact(text)
        expect(result.text).not.toContain(secret)
        expect(result.redactions.map((r) => ({ kind: r.kind, value: text.slice(r.start, r.end) }))).toContainEqual({
          kind,
          value: secret,
        })
      })
    }
  })

describe("Redaction detectors at their boundaries", () => {
  boundary(
    "JWT whose payload is not JSON (its signature)",
    Redaction.JWT_MIN_SIGNATURE,
    (n) => {
      const secret = `eyJhbGciOiJIUzI1NiJ9.SGVsbG8.${mixed(n)}`
      return { text: `auth ${secret} end`, secret }
    },
    "jwt",
  )
  boundary(
    "OpenAI key (mixed body)",
    Redaction.OPENAI_MIN_BODY,
    (n) => {
      const secret = `sk-${mixed(n)}`
      return { text: `key ${secret} end`, secret }
    },
    "openai-key",
  )
  boundary(
    "OpenAI key (lowercase body)",
    Redaction.LOWERCASE_KEY_RUN,
    (n) => {
      const secret = `sk-${lower(n)}`
      return { text: `key ${secret} end`, secret }
    },
    "openai-key",
  )
  boundary(
    "GitLab personal access token",
    Redaction.GITLAB_MIN_BODY,
    (n) => {
      const secret = `glpat-${mixed(n)}`
      return { text: `pushed with ${secret} today`, secret }
    },
    "gitlab-token",
  )
  boundary(
    "Hugging Face token",
    Redaction.HUGGINGFACE_MIN_BODY,
    (n) => {
      const secret = `hf_${mixed(n)}`
      return { text: `login --token ${secret}`, secret }
    },
    "huggingface-token",
  )
  boundary(
    "Slack webhook URL",
    Redaction.SLACK_WEBHOOK_MIN_SECRET,
    (n) => {
      const secret = `https://hooks.slack.com/services/T0A1B2C3D/B9Z8Y7X6W/${mixed(n)}`
      return { text: `POST ${secret} now`, secret }
    },
    "slack-webhook",
  )
  boundary(
    "Discord token",
    Redaction.DISCORD_MIN_HMAC,
    (n) => {
      const secret = `MTA4NjA1Njc4OTAxMjM0NTY3OA.GhIjKl.${mixed(n)}`
      return { text: `login("${secret}")`, secret }
    },
    "discord-token",
  )
})

describe("Redaction detectors: the pinned constants", () => {
  it("given the published formats, then the minimums are what those formats guarantee", () => {
    expect({
      openai: Redaction.OPENAI_MIN_BODY,
      lowercase: Redaction.LOWERCASE_KEY_RUN,
      gitlab: Redaction.GITLAB_MIN_BODY,
      huggingface: Redaction.HUGGINGFACE_MIN_BODY,
      slack: Redaction.SLACK_WEBHOOK_MIN_SECRET,
      discord: Redaction.DISCORD_MIN_HMAC,
    }).toEqual({ openai: 20, lowercase: 32, gitlab: 20, huggingface: 34, slack: 20, discord: 27 })
  })

  it("given an OpenAI key of 19 / 20 / 21 body characters, then only 20 and 21 are redacted", () => {
    const key = (n: number) => `sk-${mixed(n)}`
    expect(Redaction.redact(key(19)).text).toBe(key(19))
    expect(Redaction.redact(key(20)).text).toBe("[REDACTED:openai-key]")
    expect(Redaction.redact(key(21)).text).toBe("[REDACTED:openai-key]")
  })
})

describe("Redaction detectors: AWS access key ids", () => {
  for (const prefix of ["AKIA", "ASIA", "ABIA", "ACCA"]) {
    it(`given a ${prefix} key id of 15 / 16 / 17 characters after the prefix, then only 16 is redacted`, () => {
      const body = "Z3QX7EXAMPLE4KEYX"
      expect(kindsIn(`id ${prefix}${body.slice(0, 15)} x`)).toEqual([])
      expect(Redaction.redact(`id ${prefix}${body.slice(0, 16)} x`).text).toBe("id [REDACTED:aws-access-key-id] x")
      expect(kindsIn(`id ${prefix}${body} x`)).toEqual([])
    })
  }

  it("given a temporary (ASIA) key id, when redacted, then it is reported as an AWS access key id", () => {
    expect(Redaction.redact("AWS_ACCESS_KEY_ID=ASIAZ3QX7EXAMPLE4KEY").redactions).toEqual([
      { kind: "aws-access-key-id", start: 18, end: 38 },
    ])
  })

  it("given a look-alike prefix (ASIB), then it is left alone", () => {
    expect(kindsIn("id ASIBZ3QX7EXAMPLE4KEY x")).toEqual([])
  })
})

describe("Redaction detectors: command-line passwords", () => {
  const cases: ReadonlyArray<readonly [string, string, string | undefined]> = [
    ["--password with a space", "psql --password hunter22 -h db", "hunter22"],
    ["--password=", "mysqldump --password=Pa55word app", "Pa55word"],
    ["--password with a quoted value", "cli --password 'p@ss word'", "'p@ss word'"],
    ["MySQL's glued -p", "mysql -u root -pS3cretPass app", "S3cretPass"],
    ["mariadb's glued -p", "mariadb -h db -u app -pQ9z_x app", "Q9z_x"],
    ["MySQL's bare -p (prompts)", "mysql -u root -p app", undefined],
    ["--password followed by the next flag", "tool --password --verbose", undefined],
    ["--password with a variable", 'tool --password "$DB_PASSWORD"', undefined],
    ["-p on a command that is not MySQL", "mkdir -pAbc dir", undefined],
    ["a word ending in --password", "reset-password --passwordless", undefined],
  ]
  for (const [name, text, secret] of cases) {
    it(`given ${name}, then ${secret === undefined ? "nothing is redacted" : "the value is redacted"}`, () => {
      const result = Redaction.redact(text)
      if (secret === undefined) expect(result.redactions).toEqual([])
      else {
        expect(result.text).not.toContain(secret)
        expect(result.redactions.map((r) => [r.kind, text.slice(r.start, r.end)])).toEqual([["cli-password", secret]])
      }
    })
  }
})

describe("Redaction detectors: no false positives", () => {
  const texts = [
    "the sk-spinner-fading-circle-container class",
    "sk-learn is spelled scikit-learn; sk-abcdefghijklmnopqrstuvwxyz is a 26-letter run",
    "hf_hub_download(repo_id) and hf_transfer are Hugging Face helpers",
    "glpat- tokens start with glpat-",
    "https://hooks.slack.com/services/ is the webhook base URL",
    "Node.version.js and MTA.b.c are not Discord tokens",
  ]
  for (const text of texts)
    it(`given ${JSON.stringify(text.slice(0, 40))}, then nothing is redacted`, () => {
      expect(Redaction.redact(text).redactions).toEqual([])
    })
})

describe("Redaction: the shared corpus", () => {
  it("given the corpus, then it holds one sample of every kind", () => {
    expect(SAMPLES.map((s) => s.kind).sort()).toEqual([...Redaction.KINDS].sort())
  })
  for (const s of SAMPLES)
    it(`given a ${s.kind} sample, when redacted, then the secret is gone and the kind is reported`, () => {
      const result = Redaction.redact(s.text)
      expect(result.text).not.toContain(s.secret)
      expect(result.redactions.map((r) => r.kind)).toContain(s.kind)
    })
})

describe("Redaction detectors: linear on adversarial input", () => {
  const MB = 1_000_000
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB)
  // A detector that backtracks would take minutes on these (the suite's time limit fails it); linear ones take ms.
  const UNITS = [
    "glpat-",
    "hf_a",
    "mysql ",
    "mysql -p",
    "--password ",
    "--password '",
    "MTA4NjA1Njc4OTAxMjM0NTY3OA.",
    "MTA4NjA1Njc4OTAxMjM0NTY3OAx",
    "https://hooks.slack.com/services/T/B/",
    "sk-a",
  ]
  for (const unit of UNITS)
    it(`given 1 MB of ${JSON.stringify(unit)} repeated, when redacted, then the redactions describe the result`, () => {
      const text = fill(unit)
      const result = Redaction.redact(text)
      let out = ""
      let from = 0
      for (const r of result.redactions) {
        out += text.slice(from, r.start) + Redaction.marker(r.kind)
        from = r.end
      }
      expect(out + text.slice(from)).toBe(result.text)
      expect(Redaction.redact(result.text).text).toBe(result.text)
    })
})
