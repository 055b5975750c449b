/** `pivot fork --db FILE <session> --into NAME [--at VERSION]`: a child whose window is the parent's, and its errors. */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { pivot, realExport, realSessionId, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const hash = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")

/** A database holding the real export, imported through the CLI. */
const importedDb = async (name: string) => {
  const db = path.join(dir, `${name}.db`)
  const imported = await pivot("import", realExport, "--db", db)
  expect(imported.code).toBe(0)
  return db
}

describe("pivot fork", () => {
  it("given an imported session, when forked at a version, then the child's window there is the parent's, inspect names the parent, and the parent is unchanged", async () => {
    const db = await importedDb("fork")
    const before = await pivot("window", "--db", db, "--session", realSessionId, "--format", "json")
    const parentAt = await pivot("window", "--db", db, "--session", realSessionId, "--at", "20", "--format", "json")
    const forked = await pivot("fork", "--db", db, realSessionId, "--into", "try-b", "--at", "20")
    expect(forked).toMatchObject({ code: 0, err: [] })
    expect(forked.out).toEqual([
      `forked session ${realSessionId} at version 20 into ses_try-b (21 events: the parent's first 20, then SessionForked); the parent is unchanged`,
    ])
    const child = await pivot("window", "--db", db, "--session", "ses_try-b", "--format", "json")
    expect(child.stdout).toBe(parentAt.stdout)
    const after = await pivot("window", "--db", db, "--session", realSessionId, "--format", "json")
    expect(after.stdout).toBe(before.stdout)
    const inspected = await pivot("inspect", "--db", db, "--session", "ses_try-b")
    expect(inspected.out[1]).toBe(`forked from ${realSessionId} at version 20 → this session`)
    // The name it was forked --into finds it too, as createPivot's names do (it was "unknown session try-b").
    const byName = await pivot("inspect", "--db", db, "--session", "try-b")
    expect(byName.code).toBe(0)
    expect(byName.out).toEqual(inspected.out)
    expect((await pivot("window", "--db", db, "--session", "try-b", "--format", "json")).stdout).toBe(child.stdout)
  })

  it("given the name a session was forked --into, then the writing commands find it as the reading ones do (pin, unpin, fork, rebuild, forget)", async () => {
    const db = await importedDb("names")
    expect((await pivot("fork", "--db", db, realSessionId, "--into", "try-b", "--at", "20")).code).toBe(0)
    const message = JSON.parse((await pivot("window", "--db", db, "--session", "try-b", "--format", "json")).stdout)
      .messages[0].sourceMessageId as string
    for (const args of [
      ["pin", "--db", db, "try-b", message, "--budget", "100000"],
      ["unpin", "--db", db, "try-b", message],
      ["fork", "--db", db, "try-b", "--into", "try-c"],
      ["rebuild", "--db", db, "--session", "try-b"],
      ["forget", "--db", db, "try-b"],
    ]) {
      const result = await pivot(...args)
      expect({ args, code: result.code, err: result.err }).toEqual({ args, code: 0, err: [] })
      if (args[0] !== "rebuild") expect(result.stdout).toContain("ses_try-b")
    }
    // An id stored as given still wins, and an unknown name is still unknown.
    expect((await pivot("forget", "--db", db, "nope")).err).toEqual([
      `pivot forget: unknown session nope in ${db} (the store has no events for it)`,
    ])
  })

  it("bad input: a missing session, a version out of range, an existing target — one line each, exit 1 (2 for a usage error), the file unchanged", async () => {
    const db = await importedDb("fork-bad")
    await pivot("fork", "--db", db, realSessionId, "--into", "taken")
    const unchanged = hash(db)
    const cases = [
      [
        ["fork", "--db", db, "ses_nope", "--into", "x"],
        /^pivot fork: unknown session ses_nope in .* \(the store has no events for it\)$/,
        1,
      ],
      [
        ["fork", "--db", db, realSessionId, "--into", "y", "--at", "999999"],
        /^pivot fork: cannot fork session .* at version 999999: it has versions 1 to \d+$/,
        1,
      ],
      [
        ["fork", "--db", db, realSessionId, "--into", "taken"],
        /^pivot fork: cannot fork into session ses_taken: it already exists/,
        1,
      ],
      [["fork", "--db", db, realSessionId], /--into NAME is required/, 2],
      [["fork", "--db", path.join(dir, "missing.db"), realSessionId, "--into", "z"], /missing\.db/, 1],
    ] as const
    for (const [args, message, code] of cases) {
      const result = await pivot(...args)
      expect(result.code).toBe(code)
      // A usage error is followed by the synopsis line and the pointer to the help; every other error is one line.
      expect(result.err).toHaveLength(code === 2 ? 3 : 1)
      expect(result.err[0]).toMatch(message)
    }
    expect(hash(db)).toBe(unchanged)
    expect(fs.existsSync(path.join(dir, "missing.db"))).toBe(false)
  })
})
