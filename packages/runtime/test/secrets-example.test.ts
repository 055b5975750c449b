/** The secrets-at-rest example in docs/security.md runs as documented. */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { afterAll, expect, it } from "vitest"
import { layer, program } from "../examples/secrets.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-secrets-example-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

it("examples/secrets.ts: the key is redacted before recording, the rest erased by forget, usage unchanged", async () => {
  const filename = path.join(dir, "pivot.db")
  const lines = await Effect.runPromise(program.pipe(Effect.provide(layer(filename))))
  expect(lines).toEqual([
    "before: user: deploy with OPENAI_API_KEY=[REDACTED:openai-key] to staging",
    "before: assistant: Deploying to staging now.",
    "forgotten: key deleted true, log cleared true",
    "after: user: [ERASED]",
    "after: assistant: [ERASED]",
    "usage after: 1220 tokens",
  ])
})

it("examples/secrets.ts runs as a program (node packages/runtime/examples/secrets.ts)", () => {
  const root = path.resolve(import.meta.dirname, "../../..")
  const out = execFileSync(process.execPath, ["--conditions=@pivot/source", "packages/runtime/examples/secrets.ts"], {
    cwd: root,
    encoding: "utf8",
  })
  expect(out).toContain("after: user: [ERASED]")
})
