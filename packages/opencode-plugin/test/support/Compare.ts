// What a model call carries, in one comparable shape: the chat-completions messages OpenCode sent (system prompt aside)
// and pivot's window rendered from the store at a version. Roles, order, text, tool calls with their arguments and
// tool results (cleared-output placeholders included) must be equal.
import { type Events, type ModelMessage, Session, Window } from "@pivot/core"
import { ReadModels, SessionLog } from "@pivot/store"
import * as Effect from "effect/Effect"
import { type Captured, type ChatMessage, textOf } from "./ScriptedModel.ts"

/** One message as compared. */
export type Item =
  | { readonly role: "user"; readonly text: string }
  | {
      readonly role: "assistant"
      readonly text: string
      readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: unknown }>
    }
  | { readonly role: "tool"; readonly id: string; readonly content: string }

/** The request's messages without the system prompt. */
export const fromRequest = (messages: ReadonlyArray<ChatMessage>): Array<Item> =>
  messages.flatMap((m): Array<Item> => {
    switch (m.role) {
      case "system":
        return []
      case "user":
        return [{ role: "user", text: textOf(m) }]
      case "assistant":
        return [
          {
            role: "assistant",
            text: textOf(m),
            calls: (m.tool_calls ?? []).map((c) => ({
              id: c.id,
              name: c.function.name,
              args: JSON.parse(c.function.arguments) as unknown,
            })),
          },
        ]
      default:
        return [{ role: "tool", id: m.tool_call_id ?? "", content: textOf(m) }]
    }
  })

const outputText = (output: ModelMessage.ToolResultOutput): string => {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value
    case "json":
      return JSON.stringify(output.value)
    case "content":
      return output.value.map((item) => (item.type === "text" ? item.text : "")).join("")
  }
}

/** pivot's rendered window in the same shape (the provider joins a message's text parts, one tool message per result). */
export const fromWindow = (messages: ReadonlyArray<ModelMessage.ModelMessage>): Array<Item> =>
  messages.flatMap((m): Array<Item> => {
    if (m.role === "system") return []
    if (m.role === "user")
      return [
        {
          role: "user",
          text:
            typeof m.content === "string"
              ? m.content
              : m.content.map((p) => (p.type === "text" ? p.text : "")).join(""),
        },
      ]
    if (m.role === "assistant") {
      const parts = typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : m.content
      return [
        {
          role: "assistant",
          text: parts.map((p) => (p.type === "text" ? p.text : "")).join(""),
          calls: parts.flatMap((p) =>
            p.type === "tool-call" ? [{ id: p.toolCallId, name: p.toolName, args: p.input }] : [],
          ),
        },
      ]
    }
    return m.content.flatMap(
      (p): Array<Item> =>
        p.type === "tool-result" ? [{ role: "tool", id: p.toolCallId, content: outputText(p.output) }] : [],
    )
  })

/** A session's events as stored. */
export const storedEvents = (file: string, sessionId: string): Promise<Array<Events.Event>> =>
  Effect.runPromise(
    Effect.provide(
      Effect.map(SessionLog.read(sessionId), (logged) => logged.map((l) => l.event)),
      ReadModels.layerSqlite({ filename: file, readonly: true }),
    ),
  )

/**
 * The session's events once the store has caught up with `expected` events of the importer's kinds (the plugin syncs
 * on OpenCode's `session.idle`, which may still be running when `opencode run` returns); gives up after `timeout` ms.
 */
export const caughtUp = async (
  file: string,
  sessionId: string,
  imported: (event: Events.Event) => boolean,
  expected: number,
  timeout = 30_000,
): Promise<Array<Events.Event>> => {
  const until = Date.now() + timeout
  for (;;) {
    const events = await storedEvents(file, sessionId)
    if (events.filter(imported).length >= expected || Date.now() > until) return events
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/**
 * The window after each version of a stream: `[version, items]`, versions 1 … head; `recallIds` renders the
 * placeholders drive mode sends (naming the recall id); `hud` adds the newest `HudShown` text so far as a last user
 * message, where drive mode shows the HUD.
 */
export const windows = (
  events: ReadonlyArray<Events.Event>,
  options: { readonly recallIds?: boolean; readonly hud?: boolean } = {},
): Array<readonly [number, Array<Item>]> => {
  let state = Session.initialState
  let hud: string | undefined
  return events.map((event, i) => {
    state = Session.evolve(state, event)
    if (event._tag === "HudShown") hud = event.text
    const items = fromWindow(Window.render(state.window, options).map((r) => r.message))
    return [i + 1, options.hud === true && hud !== undefined ? [...items, { role: "user", text: hud }] : items] as const
  })
}

/**
 * For each request in order, the first version of the stream at or after the previous request's whose window under
 * drive mode (recall ids, the HUD last) equals the messages it carried; undefined where none does.
 */
export const drivenVersions = (
  events: ReadonlyArray<Events.Event>,
  requests: ReadonlyArray<Captured>,
): Array<number | undefined> => {
  const byVersion = windows(events, { recallIds: true, hud: true }).map(
    ([v, items]) => [v, JSON.stringify(items)] as const,
  )
  let previous = 0
  return requests.map((request) => {
    const sent = JSON.stringify(fromRequest(request.body.messages))
    const version = byVersion.find(([v, window]) => v >= previous && window === sent)?.[0]
    if (version !== undefined) previous = version
    return version
  })
}
