// Runnable docs: every fenced block of README.md, docs/**/*.md and packages/*/README.md follows one of the rules of
// docs/README.md — a TypeScript block is a file (or a marked region of one) under examples/, which `tsc -b` checks
// and this test runs; a console block's `npx pivot` commands are run in a scratch folder and their output compared;
// a shell block names only commands that exist; an output block is what its command prints. Any other block fails.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "../..")
const EXAMPLES = join(ROOT, "examples")
const BIN = join(ROOT, "packages/cli/src/bin.ts")

/** One fenced block: its language, its text, the marker comment right above it, and where it is. */
interface Block {
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

const markdownFiles = (): Array<string> => {
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
const words = (command: string): Array<string> =>
  [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!)

const rootScripts = Object.keys(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts)
const manifests = readdirSync(join(ROOT, "packages"))
  .map((name) => join(ROOT, "packages", name, "package.json"))
  .filter(existsSync)
  .map((path) => JSON.parse(readFileSync(path, "utf8")) as { name: string; dependencies?: Record<string, string> })
// What the docs may tell a user to install: pivot's packages and what they depend on (`ai`, `effect`, …).
const packageNames = [...new Set(manifests.flatMap((m) => [m.name, ...Object.keys(m.dependencies ?? {})]))]

const pivotHelp = spawnSync(process.execPath, [BIN, "--help"], { encoding: "utf8" }).stdout
const pivotCommands = new Set([...pivotHelp.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!))

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
      return rest.slice(1).every((a) => a.startsWith("-") || packageNames.includes(a.replace(/@[^@/]*$/, "")))
        ? undefined
        : `npm install of something that is not a pivot package: ${rest.slice(1).join(" ")}`
    return `npm ${sub} is not a command the docs use`
  }
  if (head === "npx" && rest[0] === "pivot")
    return rest[1] === undefined || rest[1].startsWith("-") || pivotCommands.has(rest[1])
      ? undefined
      : `no pivot command ${rest[1]}`
  return `${head} is not a command the docs may show (allowed: npm, npx pivot, node, cd)`
}

/** Runs `npx pivot …` or `node …` in `cwd`; answers stdout and stderr as lines. */
const run = (command: string, cwd: string): Array<string> => {
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
const scratch = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "pivot-docs-"))
  symlinkSync(join(ROOT, "packages"), join(dir, "packages"))
  symlinkSync(EXAMPLES, join(dir, "examples"))
  return dir
}

const where = (block: Block) => `${relative(ROOT, block.file)}:${block.line}`

const blocks = markdownFiles().flatMap((file) => blocksOf(file, readFileSync(file, "utf8")))
const isGenerated = (file: string) => /<!-- Generated by (\S+)/.exec(readFileSync(file, "utf8").slice(0, 400))

describe("runnable docs (the rules of docs/README.md)", () => {
  it("finds the blocks of every doc", () => {
    expect(blocks.length).toBeGreaterThan(10)
  })

  it("every block follows a rule: no fragment that cannot run", () => {
    const wrong = blocks.flatMap((block) => {
      const { lang, marker } = block
      if (marker?.kind === "example")
        return existsSync(join(ROOT, marker.value.split("#")[0]!)) && marker.value.startsWith("examples/")
          ? []
          : [`${where(block)}: the example ${marker.value} is not a file under examples/`]
      if (marker?.kind === "output") return []
      if (lang === "console" || lang === "sh") return []
      if (lang === "json" && isGenerated(block.file)) return []
      return [
        `${where(block)}: a \`\`\`${lang} block without a marker: make it an example (<!-- example: examples/FILE.ts -->), a console block, or an output (<!-- output: COMMAND -->)`,
      ]
    })
    expect(wrong).toEqual([])
  })

  it("every TypeScript block is its example file (or region) exactly", () => {
    const wrong = blocks
      .filter((block) => block.marker?.kind === "example" && existsSync(join(ROOT, block.marker.value.split("#")[0]!)))
      .filter((block) => exampleText(block.marker!.value) !== block.text)
      .map((block) => `${where(block)} differs from ${block.marker!.value}`)
    expect(wrong).toEqual([])
  })

  it("every shell and console command exists (npm scripts, pivot commands, files)", () => {
    const wrong = blocks
      .filter((block) => block.lang === "sh" || block.lang === "console")
      .flatMap((block) =>
        block.text
          .split("\n")
          .filter((line) => (block.lang === "console" ? line.startsWith("$ ") : line.trim() !== ""))
          .map((line) => line.replace(/^\$ /, "").replace(/\s+#.*$/, ""))
          .flatMap((line) => line.split(/\s*&&\s*/))
          .map((command) => [command, unknownCommand(command)] as const)
          .filter(([, why]) => why !== undefined)
          .map(([command, why]) => `${where(block)}: ${command}: ${why}`),
      )
    expect(wrong).toEqual([])
  })

  it("the generated docs name a generator that exists", () => {
    for (const file of markdownFiles()) {
      const generated = isGenerated(file)
      if (generated !== null) expect(existsSync(join(ROOT, generated[1]!)), generated[1]).toBe(true)
    }
  })

  const consoleDocs = [...new Set(blocks.filter((b) => b.lang === "console").map((b) => b.file))]
  it.each(consoleDocs.map((file) => [relative(ROOT, file), file]))(
    "%s: its console commands print what it shows, run in order in a scratch folder",
    { timeout: 300_000 },
    (_, file) => {
      const dir = scratch()
      try {
        const wrong: Array<string> = []
        for (const block of blocks.filter((b) => b.file === file && b.lang === "console")) {
          const lines = block.text.split("\n")
          for (let i = 0; i < lines.length; i++) {
            if (!lines[i]!.startsWith("$ ")) continue
            const command = lines[i]!.slice(2).replace(/\s+#.*$/, "")
            let next = i + 1
            while (next < lines.length && !lines[next]!.startsWith("$ ")) next++
            const expected = lines.slice(i + 1, next)
            while (expected.length > 0 && expected[expected.length - 1]!.trim() === "") expected.pop()
            const actual = run(command, dir)
            // A command with nothing under it is shown for what it does, not for what it prints.
            if (expected.length > 0 && !outputMatches(expected, actual))
              wrong.push(
                `${where(block)}: $ ${command}\n--- documented\n${expected.join("\n")}\n--- printed\n${actual.join("\n")}`,
              )
          }
        }
        expect(wrong).toEqual([])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  )

  const outputs = blocks.filter((b) => b.marker?.kind === "output")
  it.each(outputs.map((b) => [where(b), b]))("%s: the output block is what its command prints", (_, block) => {
    const dir = scratch()
    try {
      const actual = run(block.marker!.value, dir)
      const expected = ["…", ...block.text.split("\n"), "…"]
      expect(outputMatches(expected, actual), `documented:\n${block.text}\nprinted:\n${actual.join("\n")}`).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("the examples (examples/*.ts) run", () => {
  const files = readdirSync(EXAMPLES).filter((name) => name.endsWith(".ts"))
  it.each(files)("examples/%s exits 0 and warns of nothing", (name) => {
    const dir = scratch()
    try {
      const result = spawnSync(process.execPath, [join(EXAMPLES, name)], {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1" },
        timeout: 120_000,
      })
      expect(result.stderr).toBe("")
      expect(result.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("the checker itself", () => {
  it("finds blocks and their markers", () => {
    const found = blocksOf("x.md", "text\n<!-- example: examples/a.ts -->\n```ts\nconst a = 1\n```\n\n```\nout\n```\n")
    expect(found.map((b) => [b.lang, b.text, b.marker?.value])).toEqual([
      ["ts", "const a = 1", "examples/a.ts"],
      ["", "out", undefined],
    ])
  })

  it("matches output with … as any text, and a line of … as any lines", () => {
    expect(outputMatches(["a", "…", "d"], ["a", "b", "c", "d"])).toBe(true)
    expect(outputMatches(["a", "…", "d"], ["a", "d"])).toBe(true)
    expect(outputMatches(["a b…"], ["a bcd"])).toBe(true)
    expect(outputMatches(["a", "d"], ["a", "b", "d"])).toBe(false)
    expect(outputMatches(["a"], ["a", "b"])).toBe(false)
    expect(outputMatches(["x…z"], ["xyz", ""])).toBe(false)
    expect(outputMatches(["(1)"], ["(1)"])).toBe(true)
  })

  it("refuses commands that do not exist", () => {
    expect(unknownCommand("npm run nope")).toBe("no npm script nope")
    expect(unknownCommand("npm run check")).toBeUndefined()
    expect(unknownCommand("npx pivot nope")).toBe("no pivot command nope")
    expect(unknownCommand("npx pivot inspect --session x")).toBeUndefined()
    expect(unknownCommand("npm install @pivot/ai")).toBeUndefined()
    expect(unknownCommand("npm install left-pad")).toContain("not a pivot package")
    expect(unknownCommand("curl http://x")).toContain("not a command the docs may show")
    expect(unknownCommand("PIVOT_MODEL=x npm start")).toBeUndefined()
  })
})

describe("the README's adoption: an existing program adopts pivot in at most 5 changed lines", () => {
  const code = (path: string) =>
    readFileSync(join(ROOT, path), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.trim().startsWith("//"))
  // Lines of `after` that are not in a longest common subsequence with `before`: the lines added or changed.
  const changedLines = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): number => {
    const lcs: Array<Array<number>> = Array.from({ length: before.length + 1 }, () => Array(after.length + 1).fill(0))
    for (let i = before.length - 1; i >= 0; i--)
      for (let j = after.length - 1; j >= 0; j--)
        lcs[i]![j] = before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!)
    return after.length - lcs[0]![0]!
  }

  it("counts changed lines", () => {
    expect(changedLines(["a", "b", "c"], ["a", "x", "c", "d"])).toBe(2)
    expect(changedLines(["a"], ["a"])).toBe(0)
  })

  it.each([
    ["examples/ai-sdk-before.ts", "examples/ai-sdk-after.ts"],
    ["examples/effect-before.ts", "examples/effect-after.ts"],
  ])("%s → %s", (before, after) => {
    const changed = changedLines(code(before), code(after))
    expect(changed).toBeGreaterThan(0)
    expect(changed).toBeLessThanOrEqual(5)
  })
})
