/**
 * Record-time redaction (`redactOnRecord`): a corpus of secrets of every detector kind, recorded through the
 * ContextManager on a real SQLite file, never reaches the database's bytes (main file, WAL, shared memory), neither
 * as written nor JSON-escaped nor base64-encoded. The same run with the option off is the control: there the secrets
 * are in the file, so the byte search can fail.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Ids, Redaction } from "@pivot/core"
import type { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SAMPLES } from "../../core/test/support/secrets.ts"
import { fileBytes, formsOf } from "./support/bytes.ts"
import { run, SESSION, services, stub, tool, used } from "./support/harness.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-redact-on-record-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const ALL = SAMPLES.map((s) => s.text).join("\n")

/** The secrets (in any form) found in the files. */
const leaked = (filename: string): ReadonlyArray<string> => {
  const files = fileBytes(filename)
  return SAMPLES.filter((s) => formsOf(s.secret).some((form) => files.some((f) => f.bytes.includes(form)))).map(
    (s) => s.kind,
  )
}

/** One session that carries the corpus in every recorded text: user, assistant text and reasoning, tool input,
 * output and result, a provider error, and a compaction whose summary repeats the secrets. */
const session = (filename: string, redactOnRecord: boolean) =>
  run(
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      yield* cm.recordUserMessage(SESSION, { text: `here are my credentials:\n${ALL}` })
      const step = yield* cm.recordAssistantStep(SESSION, {
        parts: [
          { type: "reasoning", text: `the user pasted ${ALL}` },
          { type: "text", text: `I will use ${ALL}` },
          tool("bash", { command: ALL, env: { TOKEN: SAMPLES[3]!.secret } }, `ran with ${ALL}`),
          {
            type: "tool",
            id: "prt_pending_call" as Ids.PartId,
            callId: "call_pending",
            tool: "bash",
            state: { status: "running", input: { command: `deploy ${ALL}` } },
          },
        ],
        usage: used(1_000),
        finish: "tool-calls",
      })
      yield* cm.recordToolResult(SESSION, {
        messageId: step.messageId!,
        partId: "prt_pending_call" as Ids.PartId,
        state: {
          status: "completed",
          input: { command: `deploy ${ALL}` },
          output: `deployed with ${ALL}`,
          title: "deploy",
        },
      })
      yield* cm.reportProviderError(SESSION, { error: new Error(`401: bad key ${ALL}`) })
      yield* cm.recordUserMessage(SESSION, { text: "summarise please" })
      yield* cm.compact(SESSION)
      return yield* sessions.events(SESSION)
    }),
    {
      // Only record-time redaction guards the summary here: the summariser-side redaction is off.
      options: { redactOnRecord, redactSecrets: false },
      summarizer: stub(`summary: the keys were ${ALL}`),
      ids: Ids.Ids.layer,
      store: EventStore.layerSqlite({ filename }),
    },
  )

describe("record-time redaction on a real SQLite file", () => {
  it("given redactOnRecord, when a corpus of every secret kind is recorded, then no secret is in the db, -wal or -shm bytes", async () => {
    const filename = path.join(dir, "redacted.db")
    const events = await session(filename, true)
    expect(leaked(filename)).toEqual([])
    expect(fileBytes(filename).length).toBeGreaterThan(0)
    // What was found is recorded: kinds and places, never the secret.
    const notes = events.filter(
      (e): e is Extract<Sessions.Event, { _tag: "SecretsRedactedOnRecord" }> => e._tag === "SecretsRedactedOnRecord",
    )
    expect(new Set(notes.flatMap((n) => n.findings.map((f) => f.kind)))).toEqual(new Set(Redaction.KINDS))
    expect(new Set(notes.map((n) => n.command))).toEqual(
      new Set(["AddUserMessage", "RecordAssistantStep", "RecordToolResult", "ReportProviderError", "FinishSummary"]),
    )
    const json = JSON.stringify(events)
    for (const s of SAMPLES) expect(json).not.toContain(s.secret)
    expect(json).toContain("[REDACTED:openai-key]")
  })

  it("given redactOnRecord off (the control), when the same session is recorded, then every secret is in the file", async () => {
    const filename = path.join(dir, "plain.db")
    const events = await session(filename, false)
    expect(leaked(filename)).toEqual(SAMPLES.map((s) => s.kind))
    expect(events.some((e) => e._tag === "SecretsRedactedOnRecord")).toBe(false)
  })
})
