// Runnable docs, the half that runs them: every `npx pivot` / `node` command of a console block, every output block's
// command and every example (`examples/*.ts`), each a fresh Node process as a user runs it (docs/README.md). The slow
// lane (`npm run test:all`, CI): some 60 processes of about a second of CPU each were most of the fast lane's time
// (docs/testing.md, "The fast lane's time"). The structural half — every block follows a rule, equals its example,
// names commands that exist — is `docs.test.ts`, in both lanes.
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync, rmSync } from "node:fs"
import { join, relative } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { blocksOf, EXAMPLES, markdownFiles, outputMatches, ROOT, run, scratch, where } from "../docs/Docs.ts"

const blocks = markdownFiles().flatMap((file) => blocksOf(file, readFileSync(file, "utf8")))

// Each example's first run, in its own scratch folder, kept for its second run and for the output blocks that show it
// (`<!-- output: node examples/fork.ts -->`): an example runs once for both, as a user's first run would.
const firstRuns = new Map<string, { readonly dir: string; readonly run: ReturnType<typeof runExample> }>()
const runExample = (name: string, dir: string) =>
  spawnSync(process.execPath, [join(EXAMPLES, name)], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    timeout: 120_000,
  })
const firstRun = (name: string) => {
  const known = firstRuns.get(name)
  if (known !== undefined) return known
  const dir = scratch()
  const first = { dir, run: runExample(name, dir) }
  firstRuns.set(name, first)
  return first
}
afterAll(() => {
  for (const { dir } of firstRuns.values()) rmSync(dir, { recursive: true, force: true })
})

describe("runnable docs: what the commands print (the rules of docs/README.md)", () => {
  const consoleDocs = [...new Set(blocks.filter((b) => b.lang === "console").map((b) => b.file))]
  it.each(consoleDocs.map((file) => [relative(ROOT, file), file]))(
    "%s: its console commands print what it shows, run in order in a scratch folder",
    { timeout: 600_000 },
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
            // Only pivot's commands and examples run here (npm and cd are checked to exist, not run).
            if (!/^(npx pivot|node) /.test(command)) continue
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
  // Each command runs once, in its own scratch folder, however many blocks show its output; an example's output is
  // its first run's.
  const printed = new Map<string, Array<string>>()
  const outputOf = (command: string) => {
    const known = printed.get(command)
    if (known !== undefined) return known
    const example = /^node examples\/([\w-]+\.ts)$/.exec(command)
    let lines: Array<string>
    if (example !== null) {
      const { run: first } = firstRun(example[1]!)
      lines = `${first.stdout}${first.stderr}`.replace(/\n$/, "").split("\n")
    } else {
      const dir = scratch()
      try {
        lines = run(command, dir)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
    printed.set(command, lines)
    return lines
  }
  it.each(outputs.map((b) => [where(b), b]))(
    "%s: the output block is what its command prints",
    { timeout: 300_000 },
    (_, block) => {
      const actual = outputOf(block.marker!.value)
      const expected = ["…", ...block.text.split("\n"), "…"]
      expect(outputMatches(expected, actual), `documented:\n${block.text}\nprinted:\n${actual.join("\n")}`).toBe(true)
    },
  )
})

describe("the examples (examples/*.ts) run, and run again", () => {
  const files = readdirSync(EXAMPLES).filter((name) => name.endsWith(".ts"))
  // An example that leaves files behind runs again in the same folder, as a user would: the second run finds what the
  // first wrote and must neither fail (a duplicate event id) nor print anything else (a session that accumulates).
  it.each(files)(
    "examples/%s exits 0, warns of nothing, and prints the same when run again",
    { timeout: 300_000 },
    (name) => {
      const { dir, run: first } = firstRun(name)
      expect(first.stderr).toBe("")
      expect(first.status).toBe(0)
      const written = readdirSync(dir).filter((entry) => entry !== "packages" && entry !== "examples")
      if (written.length === 0) return // nothing was written: a second run starts as the first did
      const second = runExample(name, dir)
      expect(second.stderr).toBe("")
      expect(second.status).toBe(0)
      expect(second.stdout).toBe(first.stdout)
    },
  )
})
