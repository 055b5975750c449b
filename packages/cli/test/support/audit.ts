/** Inputs and a runner for the audit command tests: the real export, the OpenCode fixtures, a temporary directory. */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type Events, type Render, Window } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { EventStore } from "@pivot/store"
import { Effect, Result } from "effect"
import { run } from "../../src/Cli.ts"
import type { Io } from "../../src/commands/Command.ts"

/** The repository root (this clone). */
export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url))

/** The real OpenCode v1.16.0 export, vendored as a fixture of the importer (provenance in its README). */
export const realExport = path.join(
  repoRoot,
  "packages/opencode/test/fixtures/real/stunning-memory.v1.16.0.export.shape.json",
)

/** The session id of the real export. */
export const realSessionId = "ses_04ca851f7ffevKrKMHW3RsPK1U"

/** A fixture of the OpenCode import package. */
export const fixture = (name: string) => path.join(repoRoot, "packages/opencode/test/fixtures", name)

/** A fresh temporary directory, removed by `cleanup`. */
export const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "pivot-cli-"))

/**
 * Stops a child (SIGTERM unless told) and waits for it to exit: a `pivot serve` closing its database removes its `-wal`/`-shm`
 * files, and a folder removed meanwhile failed with ENOTEMPTY (CI on ecc7d9c).
 */
export const stopped = (child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> =>
  new Promise((resolve) => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill(signal)
  })

/** Runs `pivot` in-process; answers the exit code and what it printed. */
export const pivot = async (...args: ReadonlyArray<string>) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false, columns: 120, env: {} }
  const code = await run(args, io)
  return { code, out, err, stdout: out.join("\n") }
}

/** The events an export imports to (the test's own reference, through the importer directly). */
export const importedEvents = (file: string): ReadonlyArray<Events.Event> => {
  const result = Import.importText(fs.readFileSync(file, "utf8"))
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return result.success.events
}

/** The rendered window after the first `version` events, by the pure fold (the reference `window` must match). */
export const expectedWindow = (
  events: ReadonlyArray<Events.Event>,
  version = events.length,
): ReadonlyArray<Render.Rendered> => Window.render(Window.fold(events.slice(0, version)))

/**
 * The spec's P1 session as an OpenCode export: u1, a1 with a completed tool whose output is 200,000 characters
 * (50,000 tokens), then two more user turns, so a prune clears that output and frees 50,000 tokens. Built from the
 * `pruned.json` fixture with its prunes undone; written to `dir`.
 */
export const pruneableExport = (dir: string): string => {
  const exported = JSON.parse(fs.readFileSync(fixture("pruned.json"), "utf8"))
  exported.info.id = "ses_pruneable"
  for (const message of exported.messages) {
    message.info.sessionID = "ses_pruneable"
    for (const part of message.parts) {
      part.sessionID = "ses_pruneable"
      if (part.type === "tool") delete part.state.time.compacted
      if (part.type === "tool" && part.tool === "read") part.state.output = "x".repeat(200_000)
    }
  }
  const user = exported.messages.find((m: { info: { id: string } }) => m.info.id === "msg_04")
  for (const id of ["msg_07", "msg_08"]) {
    const copy = structuredClone(user)
    copy.info.id = id
    copy.info.time.created += 100_000
    copy.parts = copy.parts.map((p: { id: string }) => ({ ...p, id: `prt_${id.slice(4)}_01`, messageID: id }))
    exported.messages.push(copy)
  }
  const file = path.join(dir, "pruneable.json")
  fs.writeFileSync(file, JSON.stringify(exported))
  return file
}

/**
 * A store at `db` with one session's event (`ses_plain`) and no read models, as the demo and `EventStore` alone write
 * one: a read-write open by the CLI would add the read side's tables.
 */
export const plainStore = async (db: string): Promise<string> => {
  await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      yield* store.append("session-ses_plain", "any", [
        {
          id: "evt_plain_1",
          type: "SessionStarted",
          version: 1,
          data: { _tag: "SessionStarted", at: 1, sessionId: "ses_plain" },
        },
      ])
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename: db }))),
  )
  return db
}
