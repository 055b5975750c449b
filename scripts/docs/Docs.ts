// The docs check (the rules of docs/README.md): finding the fenced blocks of the docs, the rule each must follow, the
// example text a block must equal, the commands a shell block may name, and running commands as the docs show them.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"

/** The repository root. */
export const ROOT = join(import.meta.dirname, "../..")
/** The folder of the complete programs the docs show. */
export const EXAMPLES = join(ROOT, "examples")
const BIN = join(ROOT, "packages/cli/src/bin.ts")

/** One fenced block: its language, its text, the marker comment right above it, and where it is. */
export interface Block {
  readonly file: string
  readonly line: number
  readonly lang: string
  readonly text: string
  readonly marker: { readonly kind: string; readonly value: string } | undefined
}

const MARKER = /^<!--\s*(example|output|generated):\s*(.+?)\s*-->$/

/** The fenced blocks of a markdown text (``` fences; a longer fence may hold a shorter one). */
export const blocksOf = (file: string, text: string): Array<Block> => {
  const lines = text.split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})\s*([\w-]*)/.exec(lines[i]!)
    if (open === null) continue
    const fence = open[2]!
    let end = i + 1
    while (end < lines.length && !lines[end]!.trim().startsWith(fence)) end++
    let above = i - 1
    while (above >= 0 && lines[above]!.trim() === "") above--
    const marked = above >= 0 ? MARKER.exec(lines[above]!.trim()) : null
    blocks.push({
      file,
      line: i + 1,
      lang: open[3] ?? "",
      text: lines.slice(i + 1, end).join("\n"),
      marker: marked === null ? undefined : { kind: marked[1]!, value: marked[2]! },
    })
    i = end
  }
  return blocks
}

/** The docs: README.md, every .md file under docs, and the README.md of each package. */
export const markdownFiles = (): Array<string> => {
  const walk = (dir: string): Array<string> =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? walk(path) : name.endsWith(".md") ? [path] : []
    })
  const packages = readdirSync(join(ROOT, "packages"))
    .map((name) => join(ROOT, "packages", name, "README.md"))
    .filter(existsSync)
  return [join(ROOT, "README.md"), ...walk(join(ROOT, "docs")), ...packages]
}

/** The text of an example file, or of its region `#name` (between `// #region name` and `// #endregion`), dedented. */
export const exampleText = (reference: string): string => {
  const [path, region] = reference.split("#")
  const text = readFileSync(join(ROOT, path!), "utf8").replace(/\n$/, "")
  if (region === undefined) return text
  const lines = text.split("\n")
  const start = lines.findIndex((line) => line.trim() === `// #region ${region}`)
  if (start < 0) throw new Error(`${path} has no region ${region}`)
  const end = lines.findIndex((line, i) => i > start && line.trim().startsWith("// #endregion"))
  const body = lines.slice(start + 1, end < 0 ? lines.length : end).filter((l) => !l.trim().startsWith("// #region"))
  const indent = Math.min(...body.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length))
  return body.map((l) => l.slice(indent)).join("\n")
}

/**
 * Whether `actual` output lines match the documented `expected` ones: a line that is only `…` stands for any lines
 * (none included); elsewhere `…` stands for any text within the line; trailing spaces are ignored.
 */
export const outputMatches = (expected: ReadonlyArray<string>, actual: ReadonlyArray<string>): boolean => {
  const patterns = expected.map((line) =>
    line.trim() === "…"
      ? "any"
      : new RegExp(
          `^${line
            .trimEnd()
            .split("…")
            .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
            .join(".*")}$`,
        ),
  )
  const lines = actual.map((line) => line.trimEnd())
  const memo = new Map<string, boolean>()
  const match = (p: number, a: number): boolean => {
    const key = `${p},${a}`
    const known = memo.get(key)
    if (known !== undefined) return known
    let result: boolean
    if (p === patterns.length) result = a === lines.length
    else {
      const pattern = patterns[p]!
      if (pattern === "any") result = match(p + 1, a) || (a < lines.length && match(p, a + 1))
      else result = a < lines.length && pattern.test(lines[a]!) && match(p + 1, a + 1)
    }
    memo.set(key, result)
    return result
  }
  return match(0, 0)
}

/** Splits a command line into words (single and double quotes group; no expansion). */
export const words = (command: string): Array<string> =>
  [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!)

const rootScripts = Object.keys(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts)
const manifests = readdirSync(join(ROOT, "packages"))
  .map((name) => join(ROOT, "packages", name, "package.json"))
  .filter(existsSync)
  .map(
    (path) =>
      JSON.parse(readFileSync(path, "utf8")) as {
        name: string
        dependencies?: Record<string, string>
        peerDependencies?: Record<string, string>
      },
  )
// What the docs may tell a user to install: pivot's packages and what they depend on (`ai`, `effect`, …).
const packageNames = [
  ...new Set(
    manifests.flatMap((m) => [m.name, ...Object.keys(m.dependencies ?? {}), ...Object.keys(m.peerDependencies ?? {})]),
  ),
]

// The commands `pivot --help` lists (its SUBCOMMANDS section), plus `help`: the CLI itself says which exist, so a
// command the docs name must be one it lists (`pivot nope --help` prints the general help and exits 0).
let subcommands: ReadonlyArray<string> | undefined
/** The commands `pivot --help` lists, in its order. */
export const pivotSubcommands = (): ReadonlyArray<string> => {
  if (subcommands === undefined) {
    const help = spawnSync(process.execPath, [BIN, "--help"], { encoding: "utf8" }).stdout ?? ""
    const section = help.split(/^SUBCOMMANDS$/m)[1]?.split(/^[A-Z]+$/m)[0] ?? ""
    subcommands = [...section.matchAll(/^ {2}([a-z][\w-]*) {2,}/gm)].map((m) => m[1] as string)
  }
  return subcommands
}
const isPivotCommand = (command: string): boolean => command === "help" || pivotSubcommands().includes(command)

/** Why a shell command is not one the docs may show, or undefined when it is. */
export const unknownCommand = (command: string): string | undefined => {
  const [head, ...rest] = words(command.replace(/^(\w+=\S+\s+)+/, "")) // environment assignments first
  if (head === "cd" || head === undefined) return undefined
  if (head === "node")
    return rest[0] !== undefined && existsSync(join(ROOT, rest[0])) ? undefined : `no file ${rest[0]}`
  if (head === "npm") {
    const [sub, arg] = rest
    if (sub === "start" || sub === "test" || sub === "ci") return undefined
    if (sub === "run") return rootScripts.includes(arg ?? "") ? undefined : `no npm script ${arg}`
    if (sub === "install" || sub === "i")
      return rest.slice(1).every(
        (a) =>
          a.startsWith("-") ||
          packageNames.includes(a.replace(/@[^@/]*$/, "")) ||
          /(^|\/)release\/[\w*.-]+\.tgz$/.test(a), // the tarballs of `npm run release`
      )
        ? undefined
        : `npm install of something that is not a pivot package: ${rest.slice(1).join(" ")}`
    return `npm ${sub} is not a command the docs use`
  }
  if (head === "npx" && rest[0] === "pivot")
    return rest[1] === undefined || rest[1].startsWith("-") || isPivotCommand(rest[1])
      ? undefined
      : `no pivot command ${rest[1]}`
  return `${head} is not a command the docs may show (allowed: npm, npx pivot, node, cd)`
}

/** Runs `npx pivot …` or `node …` in `cwd`; answers stdout and stderr as lines. */
export const run = (command: string, cwd: string): Array<string> => {
  const [head, ...rest] = words(command)
  const args = head === "npx" ? [BIN, ...rest.slice(1)] : rest
  const result = spawnSync(process.execPath, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    timeout: 120_000,
  })
  return `${result.stdout}${result.stderr}`.replace(/\n$/, "").split("\n")
}

/** A scratch folder where `packages/` and `examples/` are the repository's, so documented relative paths work. */
export const scratch = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "pivot-docs-"))
  symlinkSync(join(ROOT, "packages"), join(dir, "packages"))
  symlinkSync(EXAMPLES, join(dir, "examples"))
  return dir
}

/** Where a block is: `file:line`. */
export const where = (block: Block) => `${relative(ROOT, block.file)}:${block.line}`

/** The generator named by a generated doc's header, when it has one. */
export const isGenerated = (file: string) =>
  existsSync(file) ? /<!-- Generated by (\S+)/.exec(readFileSync(file, "utf8").slice(0, 400)) : null

/** Why a block breaks the rules of docs/README.md, or undefined when it follows one. */
export const ruleViolation = (block: Block): string | undefined => {
  const { lang, marker } = block
  if (marker?.kind === "example")
    return marker.value.startsWith("examples/") && existsSync(join(ROOT, marker.value.split("#")[0]!))
      ? undefined
      : `${where(block)}: the example ${marker.value} is not a file under examples/`
  if (marker?.kind === "output" || lang === "console" || lang === "sh") return undefined
  if (lang === "json" && isGenerated(block.file) !== null) return undefined
  return `${where(block)}: a \`\`\`${lang} block without a marker: make it an example (<!-- example: examples/FILE.ts -->), a console block, or an output (<!-- output: COMMAND -->)`
}
