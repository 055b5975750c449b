/**
 * A demo whose model fails exits 1 and says why. In text mode the commentary tells it (`✗ the turn failed: …`); with
 * --json the commentary is off, and the failure was nowhere: exit 1 with an empty stderr. It is one line on stderr
 * there, as for every other command. The endpoint is a loopback server refusing every call with a 400.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { run } from "../src/Cli.ts"
import type { Io } from "../src/commands/Command.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-demo-failure-"))
let server: http.Server
let baseUrl: string

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(400, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: "model x does not exist", type: "invalid_request_error" } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  fs.rmSync(dir, { recursive: true, force: true })
})

const demo = async (...flags: ReadonlyArray<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    isTTY: false,
    columns: 100,
    env: { PIVOT_BASE_URL: baseUrl, PIVOT_MODEL: "x" },
  }
  const code = await run(["demo", "--db", path.join(dir, `${flags.length}.db`), ...flags], io)
  return { code, out, err }
}

describe("pivot demo when the model fails", () => {
  it("given --json, then it exits 1 with the failure as one line on stderr, and stdout stays JSON", async () => {
    const { code, out, err } = await demo("--json")
    expect(code).toBe(1)
    expect(err).toHaveLength(1)
    expect(err[0]).toMatch(/^pivot demo: the turn failed: .*model x does not exist/)
    for (const line of out) expect(() => JSON.parse(line)).not.toThrow()
  })

  it("given text, then the commentary says it and nothing repeats it on stderr", async () => {
    const { code, out, err } = await demo()
    expect(code).toBe(1)
    expect(out.some((line) => line.includes("✗ the turn failed:"))).toBe(true)
    expect(err).toEqual([])
  })
})
