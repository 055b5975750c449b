// The useChat route of examples/chat-route.ts over real HTTP, as a browser drives it: each request posts the whole
// list so far; pivot records only the newest user message and restores the chat from the store.
import type { Server } from "node:http"
import { createPivot, type Pivot } from "@pivot/ai"
import type { UIMessage } from "ai"
import { afterEach, describe, expect, it } from "vitest"
import { chatRoute, send, serve } from "../chat-route.ts"

const open: Array<{ server: Server; pivot: Pivot.Pivot }> = []
afterEach(async () => {
  for (const { server, pivot } of open.splice(0)) {
    server.close()
    await pivot.close()
  }
})

const start = async () => {
  const { model } = await import("../support/models.ts")
  const pivot = await createPivot({ model, store: ":memory:" })
  const server = await serve(chatRoute(pivot))
  open.push({ server, pivot })
  const address = server.address()
  const base = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  const history = async (id: string) => (await (await fetch(`${base}/api/chat?id=${id}`)).json()) as Array<UIMessage>
  const userTexts = async (id: string) =>
    (await pivot.session(id).transcript()).flatMap((message) =>
      message.role === "user" ? message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])) : [],
    )
  return { pivot, base, history, userTexts }
}

describe("a useChat route over pivot", () => {
  it("streams the answer as a UI message stream and restores the chat on GET", async () => {
    const { base, history } = await start()
    const stream = await send(base, "c1", [], "What does src/answer.ts export?")
    expect(stream).toContain('"type":"text-delta"')
    expect(stream).toContain("answer = 41")
    const shown = await history("c1")
    expect(shown.map((message) => message.role)).toEqual(["user", "assistant"])
    expect(shown[1]?.parts.some((part) => part.type === "dynamic-tool")).toBe(true)
  })

  it("the second request carries the whole list; only its newest user message is recorded", async () => {
    const { base, history, userTexts } = await start()
    await send(base, "c2", [], "first question")
    await send(base, "c2", await history("c2"), "second question")
    expect(await userTexts("c2")).toEqual(["first question", "second question"])
    expect((await history("c2")).map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
  })

  it("the same request sent again after a lost answer records the message once", async () => {
    const { base, userTexts, pivot } = await start()
    // The first try recorded the message but died before any answer: the window ends with it.
    await pivot.session("c3").user("are you there?")
    await send(base, "c3", [], "are you there?")
    expect(await userTexts("c3")).toEqual(["are you there?"])
  })

  it("a request without a user message is refused with 400 and records nothing", async () => {
    const { base, userTexts } = await start()
    const response = await fetch(`${base}/api/chat`, {
      method: "POST",
      body: JSON.stringify({ id: "c4", messages: [] }),
    })
    expect(response.status).toBe(400)
    expect(await userTexts("c4")).toEqual([])
  })

  it("separate chats are separate sessions", async () => {
    const { base, history } = await start()
    await send(base, "a", [], "in chat a")
    expect(await history("b")).toEqual([])
    expect((await history("a"))[0]?.parts).toEqual([{ type: "text", text: "in chat a" }])
  })
})
