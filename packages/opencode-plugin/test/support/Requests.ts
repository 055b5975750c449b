// What drive mode's real-binary tests read of a captured request: the conversation without pivot's HUD, the newest
// user text, and whether it is OpenCode's summariser call with pivot's prompt.
import { Prompt } from "@pivot/core"
import { Hud } from "@pivot/runtime"
import { type Captured, textOf } from "./ScriptedModel.ts"

/** The conversation a request carries: its messages without drive mode's HUD (the last message, pivot's own). */
export const conversation = (request: Captured) =>
  request.body.messages.filter((m) => !(m.role === "user" && textOf(m).startsWith(Hud.HEADER)))

/** The text of the request's newest user message (the HUD aside). */
export const lastUser = (request: Captured): string =>
  textOf([...conversation(request)].reverse().find((m) => m.role === "user") ?? { role: "user" })

/**
 * Whether a request is OpenCode's summariser call: OpenCode's own prompt (`kind` `summary`), or pivot's, which drive
 * mode puts in its place (its anchor line), in a call without tools.
 */
export const isSummariser = (request: Captured): boolean =>
  request.kind === "summary" ||
  (request.kind === "other" &&
    request.body.messages.some((m) => m.role === "user" && textOf(m).includes(Prompt.anchor())))
