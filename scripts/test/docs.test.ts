// Runnable docs: every fenced block of README.md, docs/**/*.md and packages/*/README.md follows one of the rules of
// docs/README.md — a TypeScript block is a file (or a marked region of one) under examples/, which `tsc -b` checks; a
// console or shell block names only commands that exist. These structural checks are cheap and run in both lanes;
// running the commands and the examples (a fresh Node process each) and comparing what they print is
// docs.run.slow.test.ts, in the slow lane (docs/testing.md, "The fast lane's time").
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  blocksOf,
  exampleText,
  isGenerated,
  markdownFiles,
  outputMatches,
  pivotSubcommands,
  ROOT,
  ruleViolation,
  unknownCommand,
  where,
} from "../docs/Docs.ts"

const blocks = markdownFiles().flatMap((file) => blocksOf(file, readFileSync(file, "utf8")))

describe("runnable docs (the rules of docs/README.md)", () => {
  it("finds the blocks of every doc", () => {
    expect(blocks.length).toBeGreaterThan(10)
  })

  it("every block follows a rule: no fragment that cannot run", () => {
    const wrong = blocks.map(ruleViolation).filter((why) => why !== undefined)
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

  it("refuses a fragment: a code block without a marker, or one naming a file outside examples/", () => {
    const [fragment, outside, example, output] = blocksOf(
      join(ROOT, "docs/new.md"),
      [
        "```ts",
        "const prepared = yield* pivot.prepare(sessionId)",
        "```",
        "<!-- example: packages/ai/src/Pivot.ts -->",
        "```ts",
        "```",
        "<!-- example: examples/embed.ts#turn -->",
        "```ts",
        "```",
        "<!-- output: npx pivot demo -->",
        "```",
        "```",
      ].join("\n"),
    )
    expect(ruleViolation(fragment!)).toContain("docs/new.md:1: a ```ts block without a marker")
    expect(ruleViolation(outside!)).toContain("is not a file under examples/")
    expect(ruleViolation(example!)).toBeUndefined()
    expect(ruleViolation(output!)).toBeUndefined()
  })

  it("refuses commands that do not exist", () => {
    expect(unknownCommand("npm run nope")).toBe("no npm script nope")
    expect(unknownCommand("npm run check")).toBeUndefined()
    expect(unknownCommand("npx pivot nope")).toBe("no pivot command nope")
    expect(unknownCommand("npx pivot inspect --session x")).toBeUndefined()
    expect(unknownCommand("npm install @pivot/ai")).toBeUndefined()
    expect(unknownCommand("npm install left-pad")).toContain("not a pivot package")
    expect(unknownCommand("npm install ../pivot/release/*.tgz ai effect")).toBeUndefined()
    expect(unknownCommand("npm install ../elsewhere/thing.tgz")).toContain("not a pivot package")
    expect(unknownCommand("curl http://x")).toContain("not a command the docs may show")
    expect(unknownCommand("PIVOT_MODEL=x npm start")).toBeUndefined()
  })
})

describe("the command lists of the docs are the CLI's (pivot --help)", () => {
  const commands = [...pivotSubcommands()].sort()

  it("the CLI lists its commands", () => {
    expect(commands).toEqual(expect.arrayContaining(["demo", "import", "window", "fork", "forget", "serve"]))
  })

  it("docs/cli.md's table has one row per command", () => {
    const text = readFileSync(join(ROOT, "docs/cli.md"), "utf8")
    const rows = [...text.matchAll(/^\| `([a-z][\w-]*)[^`]*` \|/gm)].map((m) => m[1]!)
    expect([...rows].sort()).toEqual(commands)
  })

  it("the README's list of the cli package's commands names every command", () => {
    const list =
      /\(packages\/cli\) \| the `pivot` command \(([^;)]*)/.exec(readFileSync(join(ROOT, "README.md"), "utf8"))?.[1] ??
      ""
    const listed = [...list.matchAll(/`([a-z][\w-]*)`/g)].map((m) => m[1]!)
    expect([...listed].sort()).toEqual(commands)
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
