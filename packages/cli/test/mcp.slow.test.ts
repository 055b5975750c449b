/**
 * `pivot mcp` with the MCP SDK's own client over stdio, with a real child process: an imported Claude Code session
 * in a SQLite file, the tools listed, what its compaction dropped listed, and a dropped tool output recalled byte for
 * byte; the store is left as it was (read-only). Slow lane: it spawns the CLI.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, describe, expect, it } from "vitest"
import { pivot, repoRoot, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const fixture = path.join(repoRoot, "packages/agents/test/fixtures/hand-written/claude-code-compaction.jsonl")
const session = "ses_claude-code-7f3c2a10-0000-4000-8000-00000000c1a0"

const textOf = (result: unknown): string =>
  ((result as { content: Array<{ type: string; text: string }> }).content[0]?.text ?? "") as string

describe("pivot mcp over stdio with the SDK's client (issue 33)", () => {
  it("lists context_recall and context_usage, lists what the compaction dropped and recalls an original byte for byte", async () => {
    const db = path.join(dir, "mcp.db")
    expect((await pivot("import", fixture, "--db", db)).code).toBe(0)
    const before = fs.readFileSync(db)
    const original = (
      JSON.parse(fs.readFileSync(fixture, "utf8").split("\n")[5]!) as {
        message: { content: Array<{ content: string }> }
      }
    ).message.content[0]!.content

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--conditions=@pivot/source", bin, "mcp", db, "--session", session],
      stderr: "pipe",
    })
    const client = new Client({ name: "pivot-test", version: "1.0.0" })
    await client.connect(transport)
    try {
      const tools = await client.listTools()
      expect(tools.tools.map((t) => t.name).sort()).toEqual(["context_recall", "context_usage"])
      expect(tools.tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true)

      const listed = textOf(await client.callTool({ name: "context_recall", arguments: { pivot: 1 } }))
      expect(listed).toMatch(/^Pivot #1 .* summarised 3 messages, /)
      const id = /(prt_\w+) \(output of Read,/.exec(listed)![1]!
      const recalled = await client.callTool({ name: "context_recall", arguments: { id } })
      expect(recalled.isError).toBe(false)
      expect(textOf(recalled)).toBe(original)

      const usage = textOf(await client.callTool({ name: "context_usage", arguments: {} }))
      expect(usage).toContain("14,210 read from the cache, 45,142 written to the cache")
      const unknown = await client.callTool({ name: "context_usage", arguments: { session: "ses_nope" } })
      expect(unknown.isError).toBe(true)
    } finally {
      await client.close()
    }
    // Read-only: not a byte of the store changed.
    expect(fs.readFileSync(db).equals(before)).toBe(true)
  }, 120_000)
})
