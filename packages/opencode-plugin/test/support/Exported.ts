// What the plugin's real-OpenCode tests hold its store to: exactly the import of OpenCode's own `opencode export` of the
// session (nothing lost, nothing twice), compared event by event.
import * as Path from "node:path"
import { Events } from "@pivot/core"
import * as Recorder from "../../src/Recorder.ts"
import { caughtUp } from "./Compare.ts"
import { importOf } from "./Driven.ts"
import * as OpenCode from "./OpenCode.ts"

/** The plugin's store in a project (its default place). */
export const storeOf = (p: OpenCode.Project): string => Path.join(p.dir, ".pivot/opencode.db")

/** An event as compared: encoded, without the session's title (OpenCode may title the session after the export). */
export const comparable = (event: Events.Event): string => {
  const { title: _, ...rest } = event as Events.Event & { title?: string }
  return JSON.stringify(Events.encode(rest as Events.Event))
}

/** The two sides of the check. */
export interface Recorded {
  /** The import of the export. */
  readonly imported: ReadonlyArray<Events.Event>
  /** The importer's kinds of event as the store holds them, once it caught up with the import. */
  readonly stored: ReadonlyArray<Events.Event>
  /** Every event the store holds for the session then, pivot's own too (a `SessionTitled`, pins, prunes…). */
  readonly all: ReadonlyArray<Events.Event>
}

/**
 * Every event of the importer's kinds, pivot's own prunes by a rule included: what record mode's tests compare (record
 * mode writes no such prune, so one would fail them). Drive mode's tests compare `Recorder.isImported`'s events.
 */
export const importerKinds = (event: Events.Event): boolean => Recorder.IMPORTED.has(event._tag)

/**
 * The session as the import of its export (`exported`, or a fresh `opencode export`) and as the plugin's store holds
 * it, `stored` being the events `kept` picks (`Recorder.isImported` by default); expect `stored.map(comparable)` to
 * equal `imported.map(comparable)`.
 */
export const recorded = async (
  p: OpenCode.Project,
  session: string,
  options: { readonly exported?: unknown; readonly kept?: (event: Events.Event) => boolean } = {},
): Promise<Recorded> => {
  const kept = options.kept ?? Recorder.isImported
  const imported = importOf(options.exported ?? (await OpenCode.exportSession(p, session)))
  const events = await caughtUp(storeOf(p), session, kept, imported.length)
  return { imported, stored: events.filter(kept), all: events }
}
