// What drive mode's tests compare: what OpenCode would send for some messages, and pivot's window of some events.
import { type Events, Session, Window } from "@pivot/core"
import { Import } from "@pivot/opencode"
import * as Result from "effect/Result"
import type { MessageWithParts } from "../../src/OpenCode.ts"
import { fromWindow } from "./Compare.ts"

/** The importer's events of an `opencode export`-shaped session. */
export const importOf = (exported: unknown): ReadonlyArray<Events.Event> => {
  const imported = Import.importSession(exported)
  if (Result.isFailure(imported)) throw imported.failure
  return imported.success.events
}

/** What OpenCode sends for `messages`: the importer's window of them, rendered as OpenCode renders (no recall ids). */
export const sent = (info: unknown, messages: ReadonlyArray<MessageWithParts>) =>
  fromWindow(Window.render(Session.fold(importOf({ info, messages })).window).map((r) => r.message))

/** What pivot's window is, rendered with the recall ids its placeholders name. */
export const pivots = (events: ReadonlyArray<Events.Event>) =>
  fromWindow(Window.render(Session.fold(events).window, { recallIds: true }).map((r) => r.message))
