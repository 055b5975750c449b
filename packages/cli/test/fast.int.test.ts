/**
 * `pivot window` and `pivot inspect` run without effect/cli when their arguments are plain (Fast.ts, ADR 0048): what
 * they print and their exit codes must be the command line's, byte for byte, on a database the runtime alone wrote
 * (the demo's: no read models, the log replayed), on one with read models (an import), on an export file, and on every
 * failure (a bad value, which effect/cli reads, an unknown session, a version past the head, a missing, empty or
 * truncated file). Both read the file without changing it or leaving anything beside it.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { run } from "../src/Cli.ts"
import type { Io } from "../src/commands/Command.ts"
import * as Fast from "../src/Fast.ts"
import type { Declared } from "../src/FastArgs.ts"
import { declarations } from "../src/Precompute.ts"
import { fixture, realExport, realSessionId, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const demoDb = path.join(dir, "demo.db")
const importDb = path.join(dir, "import.db")
const truncatedDb = path.join(dir, "truncated.db")
const emptyDb = path.join(dir, "empty.db")

/** Captures exactly what a run writes (lines as the process writes them) and its exit code. */
const capture = async (runner: (io: Io) => Promise<number>) => {
  let stdout = ""
  let stderr = ""
  const io: Io = {
    out: (line) => {
      stdout += `${line}\n`
    },
    err: (line) => {
      stderr += `${line}\n`
    },
    isTTY: false,
    columns: 120,
    env: {},
  }
  const code = await runner(io)
  return { stdout, stderr, code }
}

let declared: Readonly<Record<string, Declared>>
beforeAll(async () => {
  declared = await declarations()
  expect((await capture((io) => run(["demo", "--db", demoDb], io))).code).toBe(0)
  expect((await capture((io) => run(["import", realExport, "--db", importDb], io))).code).toBe(0)
  const bytes = fs.readFileSync(demoDb)
  fs.writeFileSync(truncatedDb, bytes.subarray(0, Math.floor(bytes.length / 2)))
  fs.writeFileSync(emptyDb, "")
}, 120_000)

/** A file's bytes and what lies beside it, to check that a read changed nothing. */
const state = (file: string) => ({
  hash: createHash("sha256").update(fs.readFileSync(file)).digest("hex"),
  beside: fs.readdirSync(path.dirname(file)).filter((name) => name.startsWith(`${path.basename(file)}-`)),
})

describe("the read commands without effect/cli", () => {
  it("given plain arguments, then each prints what the command line prints, byte for byte, and the same exit code", async () => {
    const argvs: ReadonlyArray<ReadonlyArray<string>> = [
      ["window", "--db", demoDb],
      ["window", "--db", demoDb, "--sources"],
      ["window", "--db", demoDb, "--format", "json"],
      ["window", "--db", demoDb, "--at", "40"],
      ["window", "--db", demoDb, "--at", "40", "--sources"],
      ["window", "--db", demoDb, "--tail", "3"],
      ["window", "--db", demoDb, "--from", "2", "--to", "3", "--sources"],
      ["window", "--db", demoDb, "--at", "999"],
      ["window", "--db", demoDb, "--session", "ses_nope"],
      ["window", "--db", demoDb, "--limit", "2", "--tail", "2"],
      ["window", "--db", demoDb, "--sources", "--format", "json"],
      ["window", "--db", path.join(dir, "missing.db")],
      ["window", "--db", truncatedDb],
      ["window", "--db", emptyDb],
      ["window", "--db", importDb, "--session", realSessionId],
      ["window", "--db", importDb, "--session", realSessionId, "--at", "40", "--format", "json"],
      ["window", fixture("pruned.json"), "--sources"],
      ["window", fixture("pruned.json"), "--db", demoDb],
      ["window", path.join(dir, "missing.json")],
      ["inspect", "--db", demoDb, "--limit", "5"],
      ["inspect", "--db", demoDb, "--format", "json"],
      ["inspect", "--db", demoDb, "--pivot", "1"],
      ["inspect", "--db", demoDb, "--pivot", "9"],
      ["inspect", "--db", demoDb, "--prices", path.join(dir, "missing-prices.json")],
      ["inspect", "--db", importDb, "--session", realSessionId, "--tail", "4"],
      ["inspect", "--db", truncatedDb],
    ]
    const codes = new Set<number>()
    for (const argv of argvs) {
      const fast = await Fast.program(declared[argv[0]!]!, argv, {
        out: () => {},
        err: () => {},
        isTTY: false,
        columns: 120,
        env: {},
      })
      expect(fast, `${argv.join(" ")} runs without effect/cli`).toBeDefined()
      const mine = await capture((io) => Fast.run(declared[argv[0]!]!, argv, io))
      const reference = await capture((io) => run(argv, io))
      expect(mine, argv.join(" ")).toEqual(reference)
      codes.add(reference.code)
    }
    // Successes, failures and wrong usage were all compared.
    expect([...codes].sort()).toEqual([0, 1, 2])
  }, 120_000)

  it("given arguments effect/cli must read, then the same route prints the command line's answer", async () => {
    const argvs: ReadonlyArray<ReadonlyArray<string>> = [
      ["window", "--db", demoDb, "--at", "x"],
      ["window", "--db", demoDb, "--format", "xml"],
      ["window", `--db=${demoDb}`],
      ["window", "--db", demoDb, "--sourcs"],
      ["window", "--db", "postgres://user:secret@host/db"],
      ["window", "--db", demoDb, "--help"],
      ["inspect", "--db", demoDb, "--pivot", "-1"],
    ]
    for (const argv of argvs) {
      const io: Io = { out: () => {}, err: () => {}, isTTY: false, columns: 120, env: {} }
      expect(await Fast.program(declared[argv[0]!]!, argv, io), argv.join(" ")).toBeUndefined()
      const mine = await capture((io) => Fast.run(declared[argv[0]!]!, argv, io))
      expect(mine, argv.join(" ")).toEqual(await capture((io) => run(argv, io)))
    }
  }, 60_000)

  it("given a database, then reading it without effect/cli changes nothing and leaves nothing beside it", async () => {
    for (const db of [demoDb, importDb, truncatedDb]) {
      const before = state(db)
      expect(before.beside).toEqual([])
      for (const argv of [
        ["window", "--db", db],
        ["window", "--db", db, "--sources"],
        ["inspect", "--db", db],
      ])
        await capture((io) => Fast.run(declared[argv[0]!]!, argv, io))
      expect(state(db)).toEqual(before)
    }
  }, 60_000)
})
