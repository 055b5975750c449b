// The shell example docs/serve.md points to runs as written: it starts `pivot serve`, asks every API route, stops.
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { expect, it } from "vitest"

it("runs examples/api.sh: every route answers, and a POST is refused", () => {
  const script = path.resolve(import.meta.dirname, "../examples/api.sh")
  const bin = path.resolve(import.meta.dirname, "../../../node_modules/.bin")
  const out = execFileSync("bash", [script], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` },
    timeout: 120_000,
  })
  expect(out).toContain('"sessions":[{"sessionId":"ses_compaction"')
  expect(out).toContain('"sourceMessageId": "msg_01"')
  expect(out).toContain('"counts":{"entered":')
  expect(out).toContain('"summaryId":"msg_09"')
  expect(out.trimEnd().endsWith("POST answers 405")).toBe(true)
})
