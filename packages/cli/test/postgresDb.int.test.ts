/**
 * `--db` takes a SQLite file; only `pivot serve` reads PostgreSQL. A postgres:// URL given to --db used to be taken as
 * a relative path: `pivot import … --db postgres://u:pw@host/db` made the folders `postgres:/u:pw@host/` in the
 * working directory, wrote a SQLite file there and said "imported … into postgres://…". It is wrong usage now, named
 * without echoing the URL (it holds a password), and nothing is created.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot } from "./support/audit.ts"

const URL = "postgres://u:secret-pw@127.0.0.1:1/pivot"
const stray = path.resolve("postgres:")
afterAll(() => fs.rmSync(stray, { recursive: true, force: true }))

describe("--db with a postgres:// URL", () => {
  it("given any command but serve, then it is a usage error naming --db, and no file or folder is made", async () => {
    const runs: Array<ReadonlyArray<string>> = [
      ["import", fixture("pruned.json"), "--db", URL],
      ["window", "--db", URL],
      ["inspect", "--db", URL],
      ["prune", "--dry-run", "--db", URL],
      ["fork", "--db", URL, "ses_pruned", "--into", "k"],
      ["rebuild", "--db", URL],
      ["check", "--db", URL],
      ["forget", "--db", URL, "ses_pruned"],
      ["projections", "--db", URL],
      ["demo", "--db", URL],
    ]
    for (const args of runs) {
      const result = await pivot(...args)
      expect(result.code, args[0]).toBe(2)
      const said = [...result.out, ...result.err].join("\n")
      expect(said, args[0]).toContain("--db takes a SQLite file")
      expect(said, args[0]).toContain("read by pivot serve and pivot mcp, as their source argument")
      expect(said, args[0]).not.toContain("secret-pw")
      expect(fs.existsSync(stray), args[0]).toBe(false)
    }
  })
})
