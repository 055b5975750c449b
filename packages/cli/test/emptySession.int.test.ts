/**
 * An empty or blank session name (found by a CLI probe): `pivot inspect --session ""` said "unknown session  in …",
 * the empty name interpolated between two spaces. Every command that takes a session (`--session`, or `<session>` for
 * the writing commands) refuses an empty or blank one as wrong usage, saying so, before it opens the database.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fixture, pivot, tempDir } from "./support/audit.ts"

const dir = tempDir()
const db = path.join(dir, "named.db")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
beforeAll(async () => {
  expect((await pivot("import", fixture("compaction-tail.json"), "--db", db)).code).toBe(0)
})

const flagged = (name: string): ReadonlyArray<ReadonlyArray<string>> => [
  ["window", "--db", db, "--session", name],
  ["prune", "--dry-run", "--db", db, "--session", name],
  ["inspect", "--db", db, "--session", name],
  ["whatif", "--db", db, "--session", name],
  ["rebuild", "--db", db, "--session", name],
  ["mcp", db, "--session", name],
]
const positional = (name: string): ReadonlyArray<ReadonlyArray<string>> => [
  ["fork", "--db", db, name, "--into", "copy"],
  ["pin", "--db", db, name, "msg_01"],
  ["unpin", "--db", db, name, "msg_01"],
  ["forget", "--db", db, name],
]

describe("an empty or blank session name", () => {
  for (const [name, said] of [
    ["", "is empty"],
    ["   ", 'is blank ("   ")'],
  ] as const)
    it(`given ${JSON.stringify(name)}, then every command taking a session says it ${said} (exit 2) and the store stays as it was`, async () => {
      const before = fs.readFileSync(db)
      for (const args of flagged(name)) {
        const result = await pivot(...args)
        expect({ args, code: result.code, err: result.err[0] }).toEqual({
          args,
          code: 2,
          err: `pivot ${args[0]}: --session ${said}: name a session by its id (ses_…) or its name`,
        })
      }
      for (const args of positional(name)) {
        const result = await pivot(...args)
        expect({ args, code: result.code, err: result.err[0] }).toEqual({
          args,
          code: 2,
          err: `pivot ${args[0]}: the session ${said}: name a session by its id (ses_…) or its name`,
        })
      }
      expect(fs.readFileSync(db).equals(before)).toBe(true)
    })
})
