/**
 * What the context manager keeps per session so that a turn costs what it adds (issue 23): an incremental renderer,
 * the latest visible messages, and the rendering of the latest window states. At most 1,000 sessions each, the least
 * recently used dropped. Never handed to code that could change them.
 */
import { IncrementalWindow, type Message, type Render, Window } from "@pivot/core"

/** The caches of one context manager. */
export interface WindowCache {
  /** The session's renderer (renders and checks only the messages a step added). */
  readonly rendererOf: (sessionId: string) => IncrementalWindow.Renderer
  /** The window's visible messages: the previous ones plus the step's (`Window.messagesAfter`). */
  readonly visibleOf: (sessionId: string, window: Window.State) => ReadonlyArray<Message.Message>
  /** The window rendered, once per window state (states are immutable: same state, same rendering). */
  readonly renderedOf: (
    sessionId: string,
    window: Window.State,
    visible: ReadonlyArray<Message.Message> | ((window: Window.State) => ReadonlyArray<Message.Message>),
  ) => ReadonlyArray<Render.Rendered>
}

/** The caches, rendering with `renderOptions`. */
export const make = (renderOptions: Render.Options): WindowCache => {
  const renderers = new Map<string, IncrementalWindow.Renderer>()
  const rendererOf = (sessionId: string) => {
    let renderer = renderers.get(sessionId)
    if (renderer === undefined) {
      renderer = IncrementalWindow.make(renderOptions)
      if (renderers.size >= 1_000) renderers.delete(renderers.keys().next().value!)
    } else renderers.delete(sessionId)
    renderers.set(sessionId, renderer)
    return renderer
  }
  const visibleMemo = new Map<string, { readonly window: Window.State; readonly messages: Array<Message.Message> }>()
  const visibleOf = (sessionId: string, window: Window.State): ReadonlyArray<Message.Message> => {
    const memo = visibleMemo.get(sessionId)
    if (memo !== undefined && memo.window === window) return memo.messages
    const messages =
      memo === undefined ? Window.messages(window) : Window.messagesAfter(memo.window, memo.messages, window)
    visibleMemo.delete(sessionId)
    visibleMemo.set(sessionId, { window, messages })
    if (visibleMemo.size > 1_000) visibleMemo.delete(visibleMemo.keys().next().value!)
    return messages
  }
  const rendered = new WeakMap<Window.State, ReadonlyArray<Render.Rendered>>()
  const renderedOf: WindowCache["renderedOf"] = (sessionId, window, visible) => {
    const known = rendered.get(window)
    if (known !== undefined) return known
    const fresh = rendererOf(sessionId).render(typeof visible === "function" ? visible(window) : visible)
    rendered.set(window, fresh)
    return fresh
  }
  return { rendererOf, visibleOf, renderedOf }
}
