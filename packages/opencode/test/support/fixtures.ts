/** Loading the fixtures and the real export, and importing them in tests. */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Events, Session, Window } from "@pivot/core"
import { Result } from "effect"
import { type ImportResult, importSession, importText } from "../../src/Import.ts"

/** The repository root (the clone). */
export const repoRoot = join(import.meta.dirname, "../../../..")

/** The real OpenCode v1.16.0 export, vendored under `test/fixtures/real/` (its README says where it came from). */
export const realExportPath = join(import.meta.dirname, "../fixtures/real/stunning-memory.v1.16.0.export.shape.json")

/** The text of a fixture under `test/fixtures/`. */
export const fixtureText = (name: string): string =>
  readFileSync(join(import.meta.dirname, "../fixtures", name), "utf8")

/** A JSON fixture, parsed. */
export const fixture = (name: string): RawExport => JSON.parse(fixtureText(name)) as RawExport

/** The import of a parsed export; fails the test when it is refused. */
export const imported = (input: unknown): ImportResult => {
  const result = importSession(input)
  if (Result.isFailure(result)) throw new Error(`import refused: ${result.failure.message}`)
  return result.success
}

/** The import of an export's text; fails the test when it is refused. */
export const importedText = (text: string): ImportResult => {
  const result = importText(text)
  if (Result.isFailure(result)) throw new Error(`import refused: ${result.failure.message}`)
  return result.success
}

/** The folded session of an import. */
export const folded = (result: ImportResult) => Session.fold(result.events)

/** Ids of the window's messages, in model order. */
export const windowIds = (result: ImportResult): Array<string> =>
  Window.messages(folded(result).window).map((m) => m.id)

/** Event tags in order. */
export const tags = (result: ImportResult): Array<string> => result.events.map((e) => e._tag)

/** Every event, encoded to JSON text and decoded back. */
export const roundTrip = (events: ReadonlyArray<Events.Event>): Array<Events.Event> =>
  events.map((e) => Events.decode(JSON.parse(JSON.stringify(Events.encode(e)))))

/** The loose shape of an export as the tests read and edit it. */
export interface RawExport {
  info: Record<string, unknown> & { id: string }
  messages: Array<RawMessage>
}
/** One raw message. */
export interface RawMessage {
  info: Record<string, any> & { id: string; role: "user" | "assistant" }
  parts: Array<Record<string, any> & { type: string }>
}
