/**
 * Deterministic expansion of a described tool output (`{ lines, sample, tail, style }`) into realistic text: source
 * code for `read`, grep matches, file lists, test-runner and build logs, unified diffs. The same description always
 * expands to the same text (a PRNG seeded from the tool call), so the demo's token counts are reproducible.
 */
import type { OutputSpec } from "./Example.ts"

/** The kind of text a described output expands to. */
export type Style = NonNullable<OutputSpec["style"]>

/** The style a tool's outputs get when the example names none (a `read` of Markdown is prose). */
export const defaultStyle = (tool: string, input: Readonly<Record<string, unknown>> = {}): Style => {
  switch (tool) {
    case "read":
      return typeof input.filePath === "string" && input.filePath.endsWith(".md") ? "prose" : "code"
    case "grep":
      return "matches"
    case "glob":
    case "list":
      return "paths"
    default:
      return "log"
  }
}

/** FNV-1a: a small, stable string hash to seed the generator. */
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** mulberry32: a seeded PRNG; deterministic, unlike `Math.random`. */
const generator = (seed: number) => {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
  return { next, int, pick }
}
type Gen = ReturnType<typeof generator>

const NOUNS = [
  "request",
  "response",
  "client",
  "config",
  "limit",
  "handler",
  "route",
  "user",
  "token",
  "bucket",
  "cache",
  "key",
  "options",
  "result",
  "session",
  "header",
  "status",
  "timeout",
  "window",
  "count",
  "store",
  "scope",
  "policy",
  "entry",
  "payload",
  "context",
]
const VERBS = [
  "get",
  "create",
  "resolve",
  "parse",
  "build",
  "handle",
  "load",
  "apply",
  "check",
  "read",
  "update",
  "find",
]
const TYPES = ["string", "number", "boolean", "Request", "Response", "Config", "RouteOptions", "Context", "Headers"]
const COMMENTS = [
  "keep the original order: middleware registration is order-sensitive",
  "fall back to the default when the route has no override",
  "the header is optional for internal callers",
  "TODO: move this into the config schema",
  "normalise the path before matching",
  "see docs/architecture.md for the request lifecycle",
  "errors here must not leak stack traces to clients",
  "cheap check first, the lookup hits Redis",
]
const SENTENCES = [
  "Every request passes the middleware pipeline in the order it is registered.",
  "Values are read from config/default.json and can be overridden per environment.",
  "Set the variable in the deployment manifest, not in the image.",
  "The server refuses to start when a required key is missing.",
  "Internal callers authenticate with service tokens issued by the platform team.",
  "Timeouts are in milliseconds unless the key name says otherwise.",
  "See the runbook before changing limits in production.",
  "Breaking changes are listed first, then features, then fixes.",
]
const PHRASES = [
  "route matched",
  "client throttled",
  "config reloaded",
  "cache miss",
  "handler finished",
  "token refreshed",
  "request rejected",
  "connection reused",
]

const cap = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)

/** Words from a path or pattern (`src/server/rateLimit.ts` → server, rate, limit), to flavour generated names. */
const wordsOf = (text: string): Array<string> =>
  text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length > 2 && !["src", "test", "tests", "lib", "index", "json"].includes(w))

const codeGenerator = (gen: Gen, flavour: ReadonlyArray<string>) => {
  const nouns = flavour.length > 0 ? [...NOUNS, ...flavour, ...flavour] : NOUNS
  const name = () => gen.pick(nouns) + (gen.next() < 0.4 ? cap(gen.pick(NOUNS)) : "")
  const expr = (): string => {
    switch (gen.int(6)) {
      case 0:
        return `${name()}.${gen.pick(VERBS)}(${name()})`
      case 1:
        return `await ${gen.pick(VERBS)}${cap(name())}(${name()}, options)`
      case 2:
        return `${name()} ?? ${gen.int(2) === 0 ? "undefined" : String(gen.int(1000))}`
      case 3:
        return `{ ...${name()}, ${name()}: ${name()} }`
      case 4:
        return `${name()}.${name()}.length > ${gen.int(50)}`
      default:
        return `new ${cap(gen.pick(NOUNS))}${cap(gen.pick(NOUNS))}(${name()})`
    }
  }
  const statement = (indent: string): string => {
    switch (gen.int(7)) {
      case 0:
        return `${indent}// ${gen.pick(COMMENTS)}`
      case 1:
        return `${indent}logger.debug("${gen.pick(PHRASES)}", { ${name()}, ${name()} })`
      case 2:
        return `${indent}${name()}.${gen.pick(VERBS)}(${name()}, ${name()})`
      case 3:
        return `${indent}if (!${name()}) return ${expr()}`
      default:
        return `${indent}const ${name()} = ${expr()}`
    }
  }
  /** A block of lines: a function, an interface or a constant. */
  const block = (): Array<string> => {
    const out: Array<string> = []
    const kind = gen.int(10)
    if (gen.next() < 0.5) out.push(`/** ${cap(gen.pick(VERBS))}s the ${gen.pick(nouns)} ${gen.pick(NOUNS)}. */`)
    if (kind < 6) {
      const fn = `${gen.pick(VERBS)}${cap(name())}`
      out.push(
        `export ${gen.next() < 0.5 ? "async " : ""}function ${fn}(${name()}: ${gen.pick(TYPES)}, options = {}) {`,
      )
      const body = 3 + gen.int(12)
      for (let i = 0; i < body; i++) {
        if (gen.next() < 0.15) {
          out.push(`  if (${name()}.${name()} === ${gen.int(2) === 0 ? "undefined" : `"${gen.pick(nouns)}"`}) {`)
          out.push(statement("    "), statement("    "))
          out.push("  }")
        } else out.push(statement("  "))
      }
      out.push(`  return ${expr()}`, "}")
    } else if (kind < 8) {
      out.push(`export interface ${cap(gen.pick(nouns))}${cap(gen.pick(NOUNS))} {`)
      const fields = 2 + gen.int(6)
      for (let i = 0; i < fields; i++)
        out.push(`  readonly ${name()}${gen.next() < 0.3 ? "?" : ""}: ${gen.pick(TYPES)}`)
      out.push("}")
    } else out.push(`export const ${name().toUpperCase()}_${gen.pick(NOUNS).toUpperCase()} = ${gen.int(10_000)}`)
    out.push("")
    return out
  }
  return { block, statement }
}

const filler = (style: Style, gen: Gen, flavour: ReadonlyArray<string>, count: number): Array<string> => {
  const out: Array<string> = []
  const code = codeGenerator(gen, flavour)
  const pool = flavour.length > 0 ? flavour : NOUNS
  const dirs = ["src/server", "src/server/middleware", "src/lib", "src/config", "test/server", "src/routes"]
  const file = () => `${gen.pick(dirs)}/${gen.pick(pool)}${cap(gen.pick(NOUNS))}${gen.next() < 0.2 ? ".test" : ""}.ts`
  while (out.length < count) {
    switch (style) {
      case "code":
        out.push(...code.block())
        break
      case "matches": {
        out.push(`${file()}:`)
        const hits = 1 + gen.int(4)
        for (let i = 0; i < hits; i++) out.push(`  Line ${1 + gen.int(1500)}: ${code.statement("").trim()}`)
        out.push("")
        break
      }
      case "paths":
        out.push(file())
        break
      case "prose":
        if (gen.next() < 0.12) out.push("", `## ${cap(gen.pick(pool))} ${gen.pick(NOUNS)}s`, "")
        else if (gen.next() < 0.4) out.push(`- \`${gen.pick(pool)}.${gen.pick(NOUNS)}\`: ${gen.pick(SENTENCES)}`)
        else out.push(gen.pick(SENTENCES))
        break
      case "tests": {
        const spec = file()
          .replace(/^src\//, "test/")
          .replace(/(\.test)?\.ts$/, ".test.ts")
        out.push(` ✓ ${spec} (${1 + gen.int(30)} tests) ${gen.int(400)}ms`)
        if (gen.next() < 0.3)
          out.push(`   ✓ ${gen.pick(pool)} > ${gen.pick(VERBS)}s the ${gen.pick(NOUNS)} ${gen.int(40)}ms`)
        break
      }
      case "diff": {
        const path = file()
        const hex = () => (gen.int(0xfffffff) + 0x1000000).toString(16).slice(0, 7)
        out.push(`diff --git a/${path} b/${path}`, `index ${hex()}..${hex()} 100644`, `--- a/${path}`, `+++ b/${path}`)
        const hunks = 1 + gen.int(3)
        for (let h = 0; h < hunks; h++) {
          const at = 1 + gen.int(400)
          const size = 4 + gen.int(12)
          out.push(`@@ -${at},${size} +${at},${size + gen.int(6)} @@`)
          for (let i = 0; i < size; i++) {
            const mark = gen.next() < 0.55 ? " " : gen.next() < 0.75 ? "+" : "-"
            out.push(`${mark}${code.statement("  ")}`)
          }
        }
        break
      }
      case "log":
        out.push(
          `${String(gen.int(24)).padStart(2, "0")}:${String(gen.int(60)).padStart(2, "0")}:${String(gen.int(60)).padStart(2, "0")} ${gen.pick(["info", "info", "debug", "warn"])} ${gen.pick(pool)}: ${gen.pick(PHRASES)} ${gen.pick(NOUNS)}=${gen.int(5000)}`,
        )
        break
    }
  }
  return out.slice(0, count)
}

const splitLines = (text: string | undefined): Array<string> => (text === undefined ? [] : text.split("\n"))

/**
 * Expands a described output of `tool` called with `input` into text of exactly `spec.lines` lines; `sample` opens
 * the text and `tail` ends it. A `read` result's lines are file lines: they are numbered and framed as the tool does.
 */
export const expand = (tool: string, input: Readonly<Record<string, unknown>>, spec: OutputSpec): string => {
  const style = spec.style ?? defaultStyle(tool, input)
  const gen = generator(hash(`${tool}\u0000${JSON.stringify(input)}`))
  const head = splitLines(spec.sample)
  const tail = splitLines(spec.tail)
  const flavour = wordsOf(
    Object.values(input)
      .filter((v) => typeof v === "string")
      .join(" "),
  )
  const middle = filler(style, gen, flavour, Math.max(0, spec.lines - head.length - tail.length))
  const lines = [...head, ...middle, ...tail].slice(0, Math.max(spec.lines, head.length + tail.length))
  if (tool !== "read") return lines.join("\n")
  const path = typeof input.filePath === "string" ? input.filePath : "file"
  const numbered = lines.map((line, i) => `${String(i + 1).padStart(5, "0")}| ${line}`)
  return [`<file path="${path}">`, ...numbered, `(End of file - total ${lines.length} lines)`, "</file>"].join("\n")
}
