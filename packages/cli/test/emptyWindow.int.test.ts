/**
 * An empty window is 0 tokens (found by a CLI probe): `pivot window` on a window with no message printed "~1 tokens", the
 * chars/4 estimate of the JSON `[]`. The rule lives in `Tokens.estimateWindow` (tested in core); here a command that
 * prints it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("an empty window's token estimate", () => {
  it("given a session's window before its first message, then window says ~0 tokens, not ~1", async () => {
    const db = path.join(dir, "empty.db")
    expect((await pivot("import", fixture("compaction-tail.json"), "--db", db)).code).toBe(0)
    const text = await pivot("window", "--db", db, "--at", "0")
    expect(text.code).toBe(0)
    expect(text.out[0]).toMatch(/0 stored messages → 0 model messages · ~0 tokens$/)
    expect(text.out[1]).toBe("  (the window is empty)")
    // A window with a message is still its JSON's estimate (the rule is about the empty one only).
    expect((await pivot("window", "--db", db, "--at", "2")).out[0]).toMatch(/→ 1 model message · ~[1-9][\d,]* tokens$/)
  })
})
