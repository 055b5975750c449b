// One secret of every detector kind, in a sentence the way it shows up in a session. Secrets are assembled from pieces
// so that this file does not itself look like leaked credentials. Shared by the redaction tests and the at-rest tests.
import type * as Redaction from "../../src/Redaction.ts"

const join = (...pieces: ReadonlyArray<string>) => pieces.join("")

/** A secret, the text it appears in, and the kind the detectors must report. */
export interface Sample {
  readonly kind: Redaction.Kind
  readonly text: string
  readonly secret: string
}

const sample = (kind: Redaction.Kind, secret: string, wrap: (secret: string) => string): Sample => ({
  kind,
  secret,
  text: wrap(secret),
})

const PRIVATE_KEY = join(
  "-----BEGIN RSA ",
  "PRIVATE KEY-----\n",
  "MIIEpAIBAAKCAQEA7bq3X9zN0aJpZs1mQe4Yw8Ff2hG5kL0vB3nR6tU9xC1dE4oP",
  "\nq2w3e4r5t6y7u8i9o0p\n-----END RSA ",
  "PRIVATE KEY-----",
)

/** Every kind of `Redaction.KINDS`, once. */
export const SAMPLES: ReadonlyArray<Sample> = [
  sample("private-key", PRIVATE_KEY, (s) => `the deploy key:\n${s}\n`),
  sample(
    "jwt",
    join(
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
      ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
      ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    (s) => `id_token: ${s}`,
  ),
  sample(
    "anthropic-key",
    join("sk-", "ant-", "api03-", "Xy7Qw2Er5Ty8Ui1Op4As6Df9Gh3Jk0LzXcVbNm12345"),
    (s) => `key ${s}`,
  ),
  sample("openai-key", join("sk-", "proj-", "Q7fz0xK2mW9bL4tR8vN1cY6hJ3pD5sA0eG2iU7"), (s) => `use ${s} here`),
  sample("aws-access-key-id", join("ASIA", "Z3QX7EXAMPLE4KEY"), (s) => `aws_access_key_id = ${s}`),
  sample("github-token", join("ghp_", "0123456789abcdefghijABCDEFGHIJ012345"), (s) => `token ${s}`),
  sample("gitlab-token", join("glpat-", "Zx8Yw7Vu6Ts5Rq4Po3Nm"), (s) => `git push https://oauth2:${s}@gitlab.com/x`),
  sample(
    "huggingface-token",
    join("hf_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
    (s) => `huggingface-cli login --token ${s}`,
  ),
  sample(
    "slack-webhook",
    join("https://hooks.slack.com/", "services/T0A1B2C3D/B9Z8Y7X6W/", "q1W2e3R4t5Y6u7I8o9P0a1S2"),
    (s) => `curl -X POST ${s} -d '{}'`,
  ),
  sample("slack-token", join("xoxb-", "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"), (s) => `SLACK=${s}`),
  sample(
    "discord-token",
    join("MTA4NjA1Njc4OTAxMjM0NTY3OA", ".GhIjKl.", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456"),
    (s) => `client.login("${s}")`,
  ),
  sample("google-api-key", join("AIza", "SyA1234567890abcdefghijklmnopqrstuv"), (s) => `?key=${s}&q=1`),
  sample("stripe-key", join("sk_", "live_", "4eC39HqLyjWDarjtT1zdp7dc"), (s) => `stripe.setKey('${s}')`),
  sample(
    "aws-secret-key",
    join("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY12"),
    (s) => `aws_secret_access_key = ${s}`,
  ),
  sample("bearer-token", "abc123DEF456ghi789JKL", (s) => `Authorization: Bearer ${s}`),
  sample("basic-auth", "dXNlcjpodW50ZXIy", (s) => `Authorization: Basic ${s}`),
  sample("url-password", "hunter2Horse", (s) => `DATABASE_URL=postgres://admin:${s}@db.internal:5432/app`),
  sample("cli-password", "Qz9!rootPw", (s) => `mysql -u root -p${s} app`),
  sample("env-secret", "correcthorse", (s) => `DB_PASSWORD=${s}\nPORT=5432`),
  sample("secret-assignment", "Tr0ub4dor&3", (s) => `password: "${s}"`),
]
