// `pivot serve`: the command's errors, and the viewer's window against `pivot window --at` for every version of an
// imported session (the same bytes, from the same database).
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Ledger } from "@pivot/core"
import { Config } from "@pivot/runtime"
import { Serve } from "@pivot/server"
import { afterAll, describe, expect, it } from "vitest"
import { DEFAULT_PORT } from "../src/commands/serve.ts"
import { fixture, importedEvents, pivot, stopped, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("pivot serve", () => {
  it("names the server's own default port in its help (the command does not load the server to say it)", () => {
    expect(DEFAULT_PORT).toBe(Serve.DEFAULT_PORT)
  })

  it("fails in one line on a missing database, and writes nothing", async () => {
    const db = path.join(dir, "missing.db")
    const result = await pivot("serve", db, "--port", "0")
    expect(result.code).toBe(1)
    expect(result.err).toEqual([
      `pivot serve: no database at ${db} (run npm start for a demo one, or pivot import <export.json> --db ${db})`,
    ])
    expect(fs.existsSync(db)).toBe(false)
  })

  it("rejects a bad port or extra arguments as wrong usage", async () => {
    expect((await pivot("serve", "--port", "http")).code).toBe(2)
    expect((await pivot("serve", "--port", "70000")).code).toBe(2)
    expect((await pivot("serve", "a.db", "b.db")).code).toBe(2)
  })

  it("rejects a token the server would refuse as wrong usage: exit 2, one line naming --token, then the usage", async () => {
    const result = await pivot("serve", path.join(dir, "missing.db"), "--token", "short")
    expect(result.code).toBe(2)
    expect(result.err[0]).toBe("pivot serve: --token: the token must be 8 to 200 printable characters without spaces")
    expect(result.err[1]).toMatch(/^Usage: pivot serve /)
  })

  it("serves every version's window with the bytes pivot window --at prints", async () => {
    const db = path.join(dir, "pivot.db")
    expect((await pivot("import", fixture("compaction-tail.json"), "--db", db)).code).toBe(0)
    const server = await Serve.start({ source: db, port: 0 })
    try {
      const head = 15
      for (let version = 0; version <= head; version++) {
        const cli = await pivot(
          "window",
          "--db",
          db,
          "--session",
          "ses_compaction",
          "--at",
          String(version),
          "--format",
          "json",
        )
        const served = await fetch(`http://127.0.0.1:${server.port}/api/sessions/ses_compaction/window/${version}/raw`)
        expect(await served.text(), `version ${version}`).toBe(cli.stdout)
      }
      const past = await fetch(`http://127.0.0.1:${server.port}/api/sessions/ses_compaction/window/${head + 1}/raw`)
      expect(past.status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it("given --prices, then the ledger route bills at those prices; a bad price file is one line, exit 1", async () => {
    const db = path.join(dir, "priced.db")
    expect((await pivot("import", fixture("compaction-tail.json"), "--db", db)).code).toBe(0)
    const prices = path.join(dir, "prices.json")
    const price = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }
    fs.writeFileSync(prices, JSON.stringify({ "anthropic/claude-sonnet-4": price }))
    // `serve` runs until stopped: a process of its own (the sources, as bin.int.test.ts runs them), killed by its pid.
    const bin = fileURLToPath(new URL("../src/bin.mjs", import.meta.url))
    const child = spawn(process.execPath, [
      "--conditions=@pivot/source",
      bin,
      "serve",
      db,
      "--port",
      "0",
      "--prices",
      prices,
    ])
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        let err = ""
        child.stdout.on("data", (chunk) => {
          out += chunk
          const found = /on (http:\/\/\S+)/.exec(out)
          if (found) resolve(found[1]!)
        })
        child.stderr.on("data", (chunk) => {
          err += chunk
        })
        child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${err}`)))
      })
      const served = await (await fetch(new URL("/api/sessions/ses_compaction/ledger", url))).json()
      const events = importedEvents(fixture("compaction-tail.json"))
      const want = Ledger.totals(Ledger.fold(events, () => price)).dollars
      const catalog = Ledger.totals(Ledger.fold(events, (ref) => Config.priceOf(ref))).dollars
      expect(served.totals.dollars).toBeCloseTo(want, 12)
      expect(served.totals.dollars).not.toBeCloseTo(catalog, 6)
    } finally {
      await stopped(child)
    }
    const bad = path.join(dir, "bad-prices.json")
    fs.writeFileSync(bad, JSON.stringify({ "anthropic/claude-sonnet-4": { input: -1 } }))
    const refused = await pivot("serve", db, "--port", "0", "--prices", bad)
    expect(refused.code).toBe(1)
    expect(refused.err).toHaveLength(1)
    expect(refused.err[0]).toMatch(/^pivot serve: .*bad-prices\.json: expected \{ "provider\/model"/)
  })
})
