/**
 * Secret redaction (spec §5, "beyond OpenCode"): API keys, bearer tokens, private keys, passwords in URLs, `.env`
 * style assignments and JWTs are replaced by `[REDACTED:<kind>]` before a summariser sees any text, and in the stored
 * summary; opt-in, in every command before it is recorded (`redactCommand`). A finding records what kind of secret
 * was found and where, never the secret itself.
 *
 * Every scan is linear in the text: a prefixed pattern starts only where a token starts (a look-behind excludes the
 * token's own characters, so two attempts never scan the same run), unbounded runs are never followed by something
 * that makes the engine backtrack through them, other repeats are bounded, and private keys are found with two
 * forward scans. Choices about false positives:
 * - Prefixed keys (`sk-`, `ghp_`, `AKIA`, …) must start a token, so `task-…` or `risk-…` never match; `sk-` keys and
 *   bearer tokens must mix character classes, so CSS names like `sk-spinner-fading-circle` and prose stay.
 * - Assignments are redacted only for secret-looking names (`*_KEY`, `*_SECRET`, `*_TOKEN`, `PASSWORD`, `apiKey`,
 *   `client_secret`, …) and only when the value is a literal: code such as `const key = getKey()`,
 *   `apiKey: process.env.API_KEY`, `password: string` or `token: accessToken` is left alone. Outside `.env` style
 *   (`NAME=value`), an unquoted value must look random (letters and digits).
 * - Hashes (lockfile `integrity`, commit SHAs) are left alone: their names are not secret-looking.
 * - A private key block without its END line (a cut tool output) is redacted to the end of its base64 body.
 *
 * Redacting twice gives the same text as redacting once: `[REDACTED:…]` markers never match a pattern, and the scan
 * repeats on its own output until nothing new is found (a redaction can expose a token boundary).
 */
import * as Schema from "effect/Schema"
import type { Command } from "./Commands.ts"
import { MessageId, PartId } from "./Ids.ts"
import type { AssistantPart, Message, MessageError, ToolState, UserPart } from "./Message.ts"

/** The kinds of secret pivot redacts, most specific first. */
export const KINDS = [
  "private-key",
  "jwt",
  "anthropic-key",
  "openai-key",
  "aws-access-key-id",
  "github-token",
  "gitlab-token",
  "huggingface-token",
  "slack-webhook",
  "slack-token",
  "discord-token",
  "google-api-key",
  "stripe-key",
  "aws-secret-key",
  "bearer-token",
  "basic-auth",
  "url-password",
  "cli-password",
  "env-secret",
  "secret-assignment",
] as const

/** A kind of secret. */
export const Kind = Schema.Literals(KINDS)
export type Kind = typeof Kind.Type

/** One redaction: the secret's kind and its `[start, end)` range in the original text. */
export interface Redaction {
  readonly kind: Kind
  readonly start: number
  readonly end: number
}

/** A redacted text and what was replaced in it. */
export interface Redacted {
  readonly text: string
  readonly redactions: ReadonlyArray<Redaction>
}

/** The text that replaces a secret of `kind`. */
export const marker = (kind: Kind): string => `[REDACTED:${kind}]`

const MARKER = /\[REDACTED:[a-z0-9-]{1,40}\]/g

const priority = new Map<Kind, number>(KINDS.map((kind, index) => [kind, index]))

// ---------------------------------------------------------------------------------------------------------------------
// Value and name heuristics
// ---------------------------------------------------------------------------------------------------------------------

const classes = (value: string): number =>
  (/[a-z]/.test(value) ? 1 : 0) + (/[A-Z]/.test(value) ? 1 : 0) + (/[0-9]/.test(value) ? 1 : 0)

/** Mixes at least two of lowercase, uppercase and digits: random tokens do, words and CSS names do not. */
const mixed = (value: string): boolean => classes(value) >= 2

const PLACEHOLDER =
  /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*|%[A-Za-z_][A-Za-z0-9_]*%|\{\{.*\}\}|<[^>]*>|\*+|x+|X+|\.+|null|nil|none|undefined|true|false|""|'')$/i

const isPlaceholder = (value: string): boolean => value.length === 0 || PLACEHOLDER.test(value)

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
const MEMBER_PATH = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/

/** Name words: `OPENAI_API_KEY` → openai, api, key; `clientSecret` → client, secret. */
const words = (name: string): ReadonlyArray<string> =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0)

const PASSWORD_WORDS = new Set([
  "password",
  "passwd",
  "pwd",
  "passphrase",
  "secret",
  "secrets",
  "credential",
  "credentials",
  "privatekey",
])
const TOKEN_WORDS = new Set(["token", "apikey", "accesskey", "secretkey", "auth", "authtoken", "accesstoken"])
const KEY_QUALIFIERS = new Set([
  "api",
  "secret",
  "private",
  "access",
  "client",
  "auth",
  "encryption",
  "signing",
  "master",
  "app",
  "license",
  "service",
  "account",
  "subscription",
  "session",
  "webhook",
])
// A name ending in one of these names a property of a secret, not the secret (`TOKEN_URL`, `secret_name`).
const METADATA_WORDS = new Set([
  "name",
  "names",
  "id",
  "ids",
  "type",
  "types",
  "count",
  "length",
  "len",
  "size",
  "file",
  "files",
  "path",
  "paths",
  "dir",
  "url",
  "uri",
  "endpoint",
  "host",
  "env",
  "var",
  "field",
  "fields",
  "prompt",
  "hint",
  "label",
  "placeholder",
  "expires",
  "expiry",
  "expiration",
  "ttl",
  "limit",
  "limits",
  "max",
  "min",
  "policy",
  "required",
  "enabled",
  "disabled",
  "header",
  "headers",
  "format",
  "prefix",
  "suffix",
  "version",
  "index",
  "usage",
  "mode",
  "kind",
  "ref",
  "source",
  "provider",
  "method",
  "scheme",
  "algorithm",
  "hash",
  "rotation",
  "manager",
  "store",
])

/** How a secret-looking name is treated: passwords accept any literal, tokens a random-looking one. */
type NameClass = "password" | "token"

const isUpperName = (name: string): boolean => /^[A-Z][A-Z0-9_]*$/.test(name)

/** Whether a variable or field name looks like it holds a secret, and which kind of secret. */
export const secretName = (name: string): { readonly kind: Kind; readonly class: NameClass } | undefined => {
  const ws = words(name)
  const last = ws[ws.length - 1]
  if (last === undefined || METADATA_WORDS.has(last)) return undefined
  const upper = isUpperName(name)
  const awsSecret = (ws.includes("aws") && ws.includes("secret")) || ws.join("").includes("secretaccesskey")
  const kind: Kind = awsSecret ? "aws-secret-key" : upper ? "env-secret" : "secret-assignment"
  if (ws.some((w) => PASSWORD_WORDS.has(w)) || (upper && last === "pass")) return { kind, class: "password" }
  if (TOKEN_WORDS.has(last) || (last === "key" && (upper || KEY_QUALIFIERS.has(ws[ws.length - 2] ?? ""))))
    return { kind, class: upper ? "password" : "token" }
  return undefined
}

/** Whether a literal bound to a secret-looking name is worth redacting (see the module notes). */
const acceptValue = (
  name: { readonly kind: Kind; readonly class: NameClass },
  value: string,
  options: { readonly quoted: boolean; readonly envStyle: boolean; readonly call: boolean },
): boolean => {
  if (isPlaceholder(value) || value.includes("[REDACTED:")) return false
  if (options.quoted) {
    if (/\s/.test(value)) return false
    return name.class === "password" || name.kind === "aws-secret-key"
      ? value.length >= 3
      : value.length >= 8 && mixed(value)
  }
  if (options.call || MEMBER_PATH.test(value)) return false
  if (options.envStyle) return true
  if (IDENTIFIER.test(value)) return /[0-9]/.test(value) && /[A-Za-z]/.test(value) && value.length >= 8
  return value.length >= 8 && mixed(value)
}

// ---------------------------------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------------------------------

interface Candidate {
  readonly kind: Kind
  readonly start: number
  readonly end: number
}

type Push = (candidate: Candidate) => void

/** A rule scanning a text for one family of secrets. */
type Rule = (text: string, push: Push) => void

/** A rule from one global regex; `group` selects the secret inside the match (the regex needs the `d` flag). */
const pattern =
  (
    kind: Kind,
    regex: RegExp,
    options: { readonly group?: number; readonly accept?: (value: string) => boolean } = {},
  ) =>
  (text: string, push: Push): void => {
    regex.lastIndex = 0
    for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
      // A rule reading a group has the `d` flag, and its group is not optional: the group always has its indices.
      const [start, end] =
        options.group === undefined ? [match.index, match.index + match[0].length] : match.indices![options.group]!
      if (options.accept === undefined || options.accept(text.slice(start, end))) push({ kind, start, end })
    }
  }

const BEGIN_KEY = /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/g
const END_KEY = /-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/g
const KEY_BODY = /[A-Za-z0-9+/=\\:,\- \t\r\n]*/y

// BEGIN … END, found with two forward scans so that many BEGINs without an END stay linear.
const privateKeys: Rule = (text, push) => {
  BEGIN_KEY.lastIndex = 0
  let endsLeft = true
  for (let begin = BEGIN_KEY.exec(text); begin !== null; begin = BEGIN_KEY.exec(text)) {
    const from = begin.index + begin[0].length
    let end: number | undefined
    if (endsLeft) {
      END_KEY.lastIndex = from
      const found = END_KEY.exec(text)
      if (found === null) endsLeft = false
      else end = found.index + found[0].length
    }
    if (end === undefined) {
      KEY_BODY.lastIndex = from
      KEY_BODY.exec(text)
      end = KEY_BODY.lastIndex
    }
    push({ kind: "private-key", start: begin.index, end })
    BEGIN_KEY.lastIndex = end
  }
}

const decodesToUserPassword = (value: string): boolean => {
  try {
    return atob(value).includes(":")
  } catch {
    return false
  }
}

const notPlaceholder = (value: string): boolean => !isPlaceholder(value)

/** Characters after `sk-` an OpenAI-style key has at least. */
export const OPENAI_MIN_BODY = 20
/** A run of lowercase letters and digits this long after `sk-` is a key even without mixed case (`sk-` + 32 hex). */
export const LOWERCASE_KEY_RUN = 32
/** Characters after `glpat-` a GitLab personal access token has at least. */
export const GITLAB_MIN_BODY = 20
/** Characters after `hf_` a Hugging Face token has at least. */
export const HUGGINGFACE_MIN_BODY = 34
/** Characters of the secret last segment of a Slack webhook URL, at least. */
export const SLACK_WEBHOOK_MIN_SECRET = 20
/** Characters of the last (HMAC) segment of a Discord token, at least. */
export const DISCORD_MIN_HMAC = 27

const LOWERCASE_RUN = new RegExp(`[a-z0-9]{${LOWERCASE_KEY_RUN},}`)

/** An `sk-` key body mixes character classes, or holds a long unbroken lowercase run (CSS names hold short words). */
const openAiBody = (value: string): boolean => mixed(value.slice(3)) || LOWERCASE_RUN.test(value.slice(3))

/** A command-line password value: not a placeholder, not the next flag, and not a quoted empty string. */
const cliPassword = (value: string): boolean => {
  const bare = value.replace(/^(["'])(.*)\1$/s, "$2")
  return !isPlaceholder(bare) && !bare.startsWith("-") && !bare.includes("[REDACTED:")
}

// Names followed by an assignment operator; the value is parsed after the name is judged. A name must start a token,
// but a quoted one may follow anything: its quote is a boundary, and an unquoted value ends right at it (a run of
// `"password":abc12345` glued together would otherwise give up one secret a pass).
const ASSIGNMENT =
  /(?:(?<![A-Za-z0-9_.$-])(?:export[ \t]+)?|(?=["']))(["']?)([A-Za-z_][A-Za-z0-9_.-]{0,100})\1([ \t]{0,4})(:=|=|:)([ \t]{0,4})/g
const VALUE = /"((?:[^"\\\n]|\\.){0,500})"|'([^'\n]{0,500})'|`([^`\n]{0,500})`|([^\s"'`,;()<>[\]]{1,500})/dy

const assignments: Rule = (text, push) => {
  ASSIGNMENT.lastIndex = 0
  for (let match = ASSIGNMENT.exec(text); match !== null; match = ASSIGNMENT.exec(text)) {
    const after = ASSIGNMENT.lastIndex
    const operator = match[4] ?? ""
    const next = text[after]
    // `==`, `=>`, `::` are comparisons, arrows and paths, not assignments.
    if (match[5] === "" && ((operator === "=" && (next === "=" || next === ">")) || (operator === ":" && next === ":")))
      continue
    const name = secretName(match[2] ?? "")
    if (name === undefined) continue
    VALUE.lastIndex = after
    const value = VALUE.exec(text)
    if (value === null) continue
    const group = value[1] !== undefined ? 1 : value[2] !== undefined ? 2 : value[3] !== undefined ? 3 : 4
    // `VALUE` has the `d` flag, and `group` is the alternative that matched.
    const range = value.indices![group]!
    const literal = text.slice(range[0], range[1])
    const envStyle = operator === "=" && match[3] === "" && match[5] === "" && isUpperName(match[2] ?? "")
    const accepted = acceptValue(name, literal, {
      quoted: group !== 4,
      envStyle,
      call: text[range[1]] === "(",
    })
    if (!accepted) continue
    push({ kind: name.kind, start: range[0], end: range[1] })
    ASSIGNMENT.lastIndex = range[1]
  }
}

/**
 * A JWT's three parts after its JSON header (`eyJ…`): a JSON payload (`eyJ`, any signature, even none), or any other
 * payload (plain bytes, or empty when detached) signed by at least `JWT_MIN_SIGNATURE` characters — an HMAC-SHA256
 * signature has 43 — so `eyJhbGciOi.x.y` in prose is left alone.
 */
const jwtShape = (value: string): boolean => {
  const [, payload = "", signature = ""] = value.split(".")
  return (payload.startsWith("eyJ") && payload.length >= 8) || signature.length >= JWT_MIN_SIGNATURE
}

/** The shortest signature that makes a JWT of a payload that is not JSON; see `jwtShape`. */
export const JWT_MIN_SIGNATURE = 16

/** The rules, in no particular order: overlaps are settled by `KINDS` order. */
const RULES: ReadonlyArray<Rule> = [
  privateKeys,
  pattern("jwt", /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g, { accept: jwtShape }),
  pattern("anthropic-key", /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/g, { accept: mixed }),
  pattern("openai-key", new RegExp(`(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{${OPENAI_MIN_BODY},}`, "g"), {
    accept: openAiBody,
  }),
  pattern("aws-access-key-id", /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g),
  pattern("github-token", /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g),
  pattern("gitlab-token", new RegExp(`(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{${GITLAB_MIN_BODY},}`, "g")),
  pattern("huggingface-token", new RegExp(`(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{${HUGGINGFACE_MIN_BODY},}`, "g"), {
    accept: (v) => mixed(v.slice(3)),
  }),
  pattern(
    "slack-webhook",
    new RegExp(
      `(?<![A-Za-z0-9])https://hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9]{1,20}/[A-Za-z0-9]{1,20}/[A-Za-z0-9]{${SLACK_WEBHOOK_MIN_SECRET},}`,
      "g",
    ),
  ),
  pattern(
    "discord-token",
    new RegExp(
      `(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,27}\\.[A-Za-z0-9_-]{6}\\.[A-Za-z0-9_-]{${DISCORD_MIN_HMAC},}(?![A-Za-z0-9_-])`,
      "g",
    ),
    { accept: mixed },
  ),
  pattern("slack-token", /(?<![A-Za-z0-9-])(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}/g, {
    accept: (v) => /[0-9]/.test(v),
  }),
  pattern("google-api-key", /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g),
  pattern("stripe-key", /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g),
  pattern("bearer-token", /\bbearer[ \t]+([A-Za-z0-9._~+/-]{8,}=*)/dgi, { group: 1, accept: mixed }),
  pattern("basic-auth", /\bbasic[ \t]+([A-Za-z0-9+/]{8,}={0,2})/dgi, { group: 1, accept: decodesToUserPassword }),
  pattern("url-password", /\b[A-Za-z][A-Za-z0-9+.-]{0,20}:\/\/[^\s:/?#@[\]"'<>]*:([^\s/?#@[\]"'<>]+)@/dg, {
    group: 1,
    accept: notPlaceholder,
  }),
  // `--password X` / `--password=X` on any command line, and MySQL's glued `-pX`.
  pattern(
    "cli-password",
    /(?<![A-Za-z0-9_-])--password(?:=|[ \t]+)("[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"'`]{1,200})/dg,
    {
      group: 1,
      accept: cliPassword,
    },
  ),
  // Found from the `-p` back to its command (a look-behind), so text without ` -p` costs nothing.
  pattern(
    "cli-password",
    /(?<=\b(?:mysql|mysqldump|mysqladmin|mariadb)[ \t][^\n;|&]{0,300}?)[ \t]-p([^\s"'`]{1,200})/dg,
    {
      group: 1,
      accept: cliPassword,
    },
  ),
  assignments,
]

// ---------------------------------------------------------------------------------------------------------------------
// Scanning
// ---------------------------------------------------------------------------------------------------------------------

interface Span extends Redaction {
  readonly rank: number
}

/** Candidates in `text` that are not (inside) an existing marker. */
const scan = (text: string): Array<Candidate> => {
  const markers: Array<readonly [number, number]> = []
  MARKER.lastIndex = 0
  for (let m = MARKER.exec(text); m !== null; m = MARKER.exec(text)) markers.push([m.index, m.index + m[0].length])
  const out: Array<Candidate> = []
  // No rule finds an empty candidate (every pattern matches its prefix, every group a character at least).
  const push: Push = (candidate) => {
    if (!insideMarker(markers, candidate)) out.push(candidate)
  }
  for (const rule of RULES) rule(text, push)
  return out
}

const insideMarker = (markers: ReadonlyArray<readonly [number, number]>, c: Candidate): boolean => {
  // The last marker starting at or before the candidate.
  let lo = 0
  let hi = markers.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (markers[mid]![0] <= c.start) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found >= 0 && c.end <= markers[found]![1]
}

/** Disjoint spans: overlapping ones merge, keeping the most specific kind. */
const merge = (spans: ReadonlyArray<Span>): Array<Span> => {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end || a.rank - b.rank)
  const out: Array<Span> = []
  for (const span of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && span.start < last.end) {
      const best = span.rank < last.rank ? span : last
      out[out.length - 1] = { kind: best.kind, rank: best.rank, start: last.start, end: Math.max(last.end, span.end) }
    } else out.push(span)
  }
  return out
}

interface Applied {
  readonly text: string
  /** For each span, where its marker sits in the new text. */
  readonly at: ReadonlyArray<number>
}

const apply = (text: string, spans: ReadonlyArray<Span>): Applied => {
  let out = ""
  let from = 0
  const at: Array<number> = []
  for (const span of spans) {
    out += text.slice(from, span.start)
    at.push(out.length)
    out += marker(span.kind)
    from = span.end
  }
  return { text: out + text.slice(from), at }
}

// Maps a position of the redacted text back to the original: a position inside a marker maps to its span's edge.
const toOriginal = (spans: ReadonlyArray<Span>, applied: Applied, position: number, edge: "start" | "end"): number => {
  let lo = 0
  let hi = spans.length - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const markerStart = applied.at[mid]!
    if (edge === "start" ? markerStart <= position : markerStart < position) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  if (found < 0) return position
  const span = spans[found]!
  const markerEnd = applied.at[found]! + marker(span.kind).length
  if (edge === "start" ? position < markerEnd : position <= markerEnd) return edge === "start" ? span.start : span.end
  return position - markerEnd + span.end
}

// A redaction can turn the character before a token into a boundary; a few more passes settle that.
const MAX_PASSES = 8

/**
 * Replaces every secret in `text` by `[REDACTED:<kind>]`. Offsets in `redactions` refer to the original text, in
 * ascending order; the secrets themselves appear nowhere in the result.
 *
 * **Example**
 * ```ts
 * Redaction.redact("OPENAI_API_KEY=sk-proj-Abc123…").text // "OPENAI_API_KEY=[REDACTED:openai-key]"
 * ```
 */
export const redact = (text: string): Redacted => {
  let spans: Array<Span> = []
  let applied: Applied = { text, at: [] }
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const found = scan(applied.text)
    if (found.length === 0) break
    const mapped = found.map(
      (c): Span => ({
        kind: c.kind,
        rank: priority.get(c.kind) ?? KINDS.length,
        start: toOriginal(spans, applied, c.start, "start"),
        end: toOriginal(spans, applied, c.end, "end"),
      }),
    )
    spans = merge([...spans, ...mapped])
    applied = apply(text, spans)
  }
  return { text: applied.text, redactions: spans.map(({ kind, start, end }) => ({ kind, start, end })) }
}

// ---------------------------------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------------------------------

/** Where a secret was found in a message: the message, the part, the field path inside it, and the kind. */
export const Finding = Schema.Struct({
  messageId: MessageId,
  partId: Schema.optionalKey(PartId),
  /** The field inside the part (or message), e.g. `text`, `state.input.command`, `state.output`, `error.message`. */
  field: Schema.String,
  kind: Kind,
})
export type Finding = typeof Finding.Type

/** Redacted messages and what was found in them. */
export interface RedactedMessages {
  readonly messages: ReadonlyArray<Message>
  readonly findings: ReadonlyArray<Finding>
}

type Report = (field: string, kind: Kind) => void

// Inline media is binary, not text: scanning it could only corrupt it.
const isInlineData = (value: string): boolean => {
  if (!value.startsWith("data:")) return false
  const comma = value.indexOf(",")
  return comma > 0 && comma < 300 && value.slice(0, comma).endsWith(";base64")
}

const redactString = (value: string, field: string, report: Report): string => {
  if (isInlineData(value)) return value
  const result = redact(value)
  for (const r of result.redactions) report(field, r.kind)
  return result.redactions.length === 0 ? value : result.text
}

/**
 * Redacts every string inside a JSON-like value. A string bound to a secret-looking key (`password`, `API_KEY`) is
 * replaced whole when it is a literal worth redacting; returns the same reference when nothing changed.
 */
const redactDeep = (value: unknown, field: string, report: Report, ancestors: Set<object>): unknown => {
  if (typeof value === "string") return redactString(value, field, report)
  if (typeof value !== "object" || value === null || ancestors.has(value)) return value
  ancestors.add(value)
  try {
    if (Array.isArray(value)) {
      let changed = false
      const out = value.map((item, i) => {
        const next = redactDeep(item, `${field}[${i}]`, report, ancestors)
        if (next !== item) changed = true
        return next
      })
      return changed ? out : value
    }
    let changed = false
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      const path = `${field}.${key}`
      let next: unknown
      const name = typeof item === "string" ? secretName(key) : undefined
      if (name !== undefined && typeof item === "string" && acceptValue(name, item, BOUND)) {
        report(path, name.kind)
        next = marker(name.kind)
      } else next = redactDeep(item, path, report, ancestors)
      if (next !== item) changed = true
      out[key] = next
    }
    return changed ? out : value
  } finally {
    ancestors.delete(value)
  }
}

// A string value under a key is bound to that key as surely as a quoted literal.
const BOUND = { quoted: true, envStyle: false, call: false } as const

const redactText = <P extends { readonly text: string }>(part: P, report: Report): P => {
  const text = redactString(part.text, "text", report)
  return text === part.text ? part : { ...part, text }
}

const redactUserPart = (part: UserPart, report: Report): UserPart => {
  switch (part.type) {
    case "text":
      return redactText(part, report)
    case "subtask": {
      const prompt = redactString(part.prompt, "prompt", report)
      const description = redactString(part.description, "description", report)
      return prompt === part.prompt && description === part.description ? part : { ...part, prompt, description }
    }
    case "file": {
      const url = redactString(part.url, "url", report)
      return url === part.url ? part : { ...part, url }
    }
    case "compaction":
      return part
  }
}

const redactAssistantPart = (part: AssistantPart, report: Report): AssistantPart => {
  switch (part.type) {
    case "text":
    case "reasoning":
      return redactText(part, report)
    case "file": {
      const url = redactString(part.url, "url", report)
      return url === part.url ? part : { ...part, url }
    }
    case "tool": {
      const state = redactDeep(part.state, "state", report, new Set()) as ToolState
      return state === part.state ? part : { ...part, state }
    }
    case "step-start":
    case "step-finish":
      return part
  }
}

const mapParts = <P extends { readonly id: PartId }>(
  parts: ReadonlyArray<P>,
  redactPart: (part: P, report: Report) => P,
  report: (partId: PartId | undefined, field: string, kind: Kind) => void,
): ReadonlyArray<P> => {
  let changed = false
  const out = parts.map((part) => {
    const next = redactPart(part, (field, kind) => report(part.id, field, kind))
    if (next !== part) changed = true
    return next
  })
  return changed ? out : parts
}

/** Redacts one message; `report` receives each finding. Returns the same message when nothing changed. */
const redactMessage = (
  message: Message,
  report: (partId: PartId | undefined, field: string, kind: Kind) => void,
): Message => {
  const onMessage: Report = (field, kind) => report(undefined, field, kind)
  if (message.role === "user") {
    const parts = mapParts(message.parts, redactUserPart, report)
    const system = message.system === undefined ? undefined : redactString(message.system, "system", onMessage)
    if (parts === message.parts && system === message.system) return message
    return { ...message, parts, ...(system === undefined ? {} : { system }) }
  }
  const parts = mapParts(message.parts, redactAssistantPart, report)
  const error =
    message.error === undefined ? undefined : (redactDeep(message.error, "error", onMessage, new Set()) as MessageError)
  if (parts === message.parts && error === message.error) return message
  return { ...message, parts, ...(error === undefined ? {} : { error }) }
}

/**
 * Redacts every text-bearing field of the messages: text and reasoning, subtask prompts, non-inline file URLs, tool
 * inputs, outputs, errors, titles and metadata (every string, however deep), the message error and system prompt.
 * Unchanged messages keep their identity. Findings say where and what kind, never the value.
 */
export const redactMessages = (messages: ReadonlyArray<Message>): RedactedMessages => {
  const findings: Array<Finding> = []
  const out = messages.map((message) =>
    redactMessage(message, (partId, field, kind) =>
      findings.push(
        partId === undefined ? { messageId: message.id, field, kind } : { messageId: message.id, partId, field, kind },
      ),
    ),
  )
  return { messages: out, findings }
}

// ---------------------------------------------------------------------------------------------------------------------
// Commands (record-time redaction)
// ---------------------------------------------------------------------------------------------------------------------

/** Redacts every string inside a JSON-like value (as tool inputs are); `field` names its root in the findings. */
export const redactValue = <A>(
  value: A,
  field: string,
): { readonly value: A; readonly findings: ReadonlyArray<{ readonly field: string; readonly kind: Kind }> } => {
  const findings: Array<{ field: string; kind: Kind }> = []
  const out = redactDeep(value, field, (f, kind) => findings.push({ field: f, kind }), new Set()) as A
  return { value: out, findings }
}

/** Where a secret was found in a command: the message and part when there is one, the field, and the kind. */
export interface CommandFinding {
  readonly messageId?: MessageId
  readonly partId?: PartId
  readonly field: string
  readonly kind: Kind
}

/** A command with every secret in its text replaced, and what was found. */
export interface RedactedCommand<C> {
  readonly command: C
  readonly findings: ReadonlyArray<CommandFinding>
}

const withMessage =
  (findings: Array<CommandFinding>, messageId: MessageId | undefined, partId?: PartId) => (field: string, kind: Kind) =>
    findings.push({
      ...(messageId === undefined ? {} : { messageId }),
      ...(partId === undefined ? {} : { partId }),
      field,
      kind,
    })

/**
 * Redacts the text a command carries before it is decided: user and assistant messages (text, reasoning, tool
 * inputs, outputs and errors), tool results, provider errors, a session title, a compaction prompt and its plugin
 * context, a summary and a summariser error. Commands without text are answered unchanged (the same reference).
 */
export const redactCommand = <C extends Command>(command: C): RedactedCommand<C> => {
  const findings: Array<CommandFinding> = []
  const same = { command, findings }
  const onMessage = (message: Message): Message =>
    redactMessage(message, (partId, field, kind) => withMessage(findings, message.id, partId)(field, kind))
  switch (command._tag) {
    case "StartSession": {
      if (command.title === undefined) return same
      const title = redactString(command.title, "title", withMessage(findings, undefined))
      return title === command.title ? same : { command: { ...command, title }, findings }
    }
    case "AddUserMessage":
    case "RecordAssistantStep": {
      const message = onMessage(command.message)
      return message === command.message ? same : { command: { ...command, message }, findings }
    }
    case "ReportProviderError": {
      const message = onMessage(command.message)
      const error = redactDeep(command.error, "error", withMessage(findings, command.message.id), new Set())
      return message === command.message && error === command.error
        ? same
        : { command: { ...command, message, error }, findings }
    }
    case "RecordToolResult": {
      const report = withMessage(findings, command.messageId, command.partId)
      const state = redactDeep(command.state, "state", report, new Set())
      return state === command.state ? same : { command: { ...command, state }, findings }
    }
    case "ProcessCompaction": {
      const report = withMessage(findings, command.markerId)
      const prompt = command.prompt === undefined ? undefined : redactString(command.prompt, "prompt", report)
      const pluginContext =
        command.pluginContext === undefined
          ? undefined
          : (redactDeep(command.pluginContext, "pluginContext", report, new Set()) as ReadonlyArray<string>)
      return prompt === command.prompt && pluginContext === command.pluginContext
        ? same
        : {
            command: {
              ...command,
              ...(prompt === undefined ? {} : { prompt }),
              ...(pluginContext === undefined ? {} : { pluginContext }),
            },
            findings,
          }
    }
    case "FinishSummary": {
      const text = redactString(command.text, "text", withMessage(findings, command.markerId))
      return text === command.text ? same : { command: { ...command, text }, findings }
    }
    case "FailSummary": {
      const error = redactDeep(command.error, "error", withMessage(findings, command.markerId), new Set())
      return error === command.error ? same : { command: { ...command, error }, findings }
    }
    default:
      return same
  }
}
