// A `useChat` route over pivot. The browser's `useChat` posts the chat's whole UI message list on every request; with
// pivot the store owns the history, so the route takes only the newest user message from the request, sends the model
// pivot's window (compacted and pruned), streams the answer back as a UI message stream, and restores a chat's
// display from the store on GET. Runs offline: `node examples/chat-route.ts` serves it and plays two requests.
import { createServer, type Server } from "node:http"
import { createPivot, type Pivot } from "@pivot/ai"
import { convertToModelMessages, stepCountIs, streamText, type UIMessage } from "ai"
import { fresh } from "./support/fresh.ts"
import { model, tools } from "./support/models.ts"

// #region route
/** The route: `POST` with useChat's body `{ id, messages }` answers a UI message stream; `GET ?id=` the chat so far. */
export const chatRoute =
  (pivot: Pivot.Pivot) =>
  async (request: Request): Promise<Response> => {
    if (request.method === "GET") {
      const id = new URL(request.url).searchParams.get("id") ?? "default"
      return Response.json(await pivot.session(id).uiMessages()) // what `useChat({ messages })` starts from
    }
    const { id, messages } = (await request.json()) as { id: string; messages: Array<UIMessage> }
    const newest = messages.filter((message) => message.role === "user").at(-1)
    if (newest === undefined) return new Response("no user message", { status: 400 })
    const chat = pivot.session(id)
    const result = streamText(
      // Only the newest user message goes in: pivot records it and sends the model its own window instead.
      chat.wrap({ model, tools, stopWhen: stepCountIs(5), messages: await convertToModelMessages([newest]) }),
    )
    return result.toUIMessageStreamResponse()
  }
// #endregion

/** Serves a fetch-style handler on 127.0.0.1 (any framework's route works the same way). */
export const serve = (handler: (request: Request) => Promise<Response>, port = 0): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer(async (req, res) => {
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks)
      const init = { method: req.method ?? "GET", ...(body === undefined ? {} : { body }) }
      const response = await handler(new Request(`http://127.0.0.1${req.url}`, init))
      res.writeHead(response.status, Object.fromEntries(response.headers))
      if (response.body !== null) for await (const chunk of response.body) res.write(chunk)
      res.end()
    })
    server.listen(port, "127.0.0.1", () => resolve(server))
  })

/** What useChat does on send: the whole list so far plus the new message, posted; the stream read to its end. */
export const send = async (base: string, id: string, shown: Array<UIMessage>, text: string): Promise<string> => {
  const user: UIMessage = { id: `u${shown.length}`, role: "user", parts: [{ type: "text", text }] }
  const response = await fetch(`${base}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, messages: [...shown, user] }),
  })
  return response.text()
}

if (import.meta.main) {
  const pivot = await createPivot({ model, store: fresh("./data/chat.db") }) // each run starts from an empty store
  const server = await serve(chatRoute(pivot))
  const address = server.address()
  const base = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  const id = "chat-1" // the chat's id, as useChat sends it: the same id finds the same chat
  await send(base, id, [], "What does src/answer.ts export?")
  const shown = (await (await fetch(`${base}/api/chat?id=${id}`)).json()) as Array<UIMessage>
  await send(base, id, shown, "Thanks!")
  const restored = (await (await fetch(`${base}/api/chat?id=${id}`)).json()) as Array<UIMessage>
  for (const message of restored)
    console.log(
      `${message.role}: ${message.parts.flatMap((part) => ("text" in part ? [part.text] : part.type === "step-start" ? [] : [part.type])).join(" ")}`,
    )
  server.close()
  await pivot.close()
}
