/**
 * Runs one scenario against the real OpenCode and captures what it did: every request body the scripted model
 * received and the session's `opencode export`.
 */
import { join } from "node:path"
import type { ChatRequest } from "./model-server.ts"
import * as ModelServer from "./model-server.ts"
import * as OpenCode from "./opencode.ts"
import { type Kind, kindOf, type Scenario, scriptedModel } from "./scenarios.ts"

/** One captured request: its kind, body, and the scripted reply's shape (an answer or an HTTP error). */
export interface CapturedRequest {
  readonly index: number
  readonly kind: Kind
  readonly body: ChatRequest
  readonly reply: ModelServer.Reply
}

/** A captured scenario. `repo` is the scratch project path the requests and the export mention. */
export interface Capture {
  readonly scenario: string
  readonly opencodeVersion: string
  readonly repo: string
  readonly sessionId: string
  readonly requests: ReadonlyArray<CapturedRequest>
  /** The text `opencode export` printed. */
  readonly exportText: string
}

/**
 * Sends a turn and interrupts it `afterMs` after the scripted model has asked for a tool in it (so the tool is
 * running); settles when OpenCode has answered the turn.
 */
const interrupt = async (
  server: OpenCode.Server,
  model: ModelServer.ModelServer,
  sessionId: string,
  text: string,
  afterMs: number,
) => {
  const before = model.requests.length
  const turn = OpenCode.prompt(server, sessionId, text)
  const asked = () =>
    model.requests.slice(before).some((r) => r.reply._tag === "answer" && (r.reply.toolCalls ?? []).length > 0)
  for (let waited = 0; !asked() && waited < 120_000; waited += 200)
    await new Promise((resolve) => setTimeout(resolve, 200))
  await new Promise((resolve) => setTimeout(resolve, afterMs))
  await OpenCode.abort(server, sessionId)
  return turn
}

/** Runs the scenario's turns through one `opencode serve` (one session) and exports the session with `opencode export`. */
export const capture = async (scenario: Scenario, log: (line: string) => void = () => {}): Promise<Capture> => {
  const model: { respond: (request: ChatRequest) => ModelServer.Reply } = {
    respond: () => {
      throw new Error("the scenario has not started")
    },
  }
  const server = await ModelServer.start((request) => model.respond(request))
  const ws = OpenCode.workspace({
    baseURL: server.baseURL,
    context: scenario.context,
    output: scenario.output,
    ...(scenario.compaction ? { compaction: scenario.compaction } : {}),
    files: scenario.files,
    ...(scenario.inputs ? { inputs: scenario.inputs } : {}),
  })
  try {
    model.respond = scriptedModel(scenario, ws.repo)
    const opencode = await OpenCode.serve(ws)
    let sessionId: string
    try {
      sessionId = await OpenCode.createSession(opencode)
      for (const [i, turn] of scenario.turns.entries()) {
        const started = Date.now()
        const label = typeof turn === "string" ? `"${turn}"` : turn._tag
        // A turn that ends in an error (a failed summary) is part of the scenario: note it and go on.
        await (typeof turn === "string"
          ? OpenCode.prompt(opencode, sessionId, turn)
          : turn._tag === "attach"
            ? OpenCode.prompt(opencode, sessionId, turn.text, [{ path: join(ws.repo, turn.file), mime: turn.mime }])
            : turn._tag === "abort"
              ? interrupt(opencode, server, sessionId, turn.text, turn.afterMs)
              : OpenCode.summarize(opencode, sessionId)
        ).catch((e: unknown) => log(`${scenario.name}: turn ${i + 1} failed: ${String(e)}`))
        log(
          `${scenario.name}: turn ${i + 1}/${scenario.turns.length} ${label} (${Date.now() - started} ms, ${server.requests.length} requests)`,
        )
      }
    } finally {
      await opencode.close()
    }
    const exportText = await OpenCode.exportSession(ws, sessionId)
    return {
      scenario: scenario.name,
      opencodeVersion: OpenCode.OPENCODE_VERSION,
      repo: ws.repo,
      sessionId,
      requests: server.requests.map((r) => ({ index: r.index, kind: kindOf(r.body), body: r.body, reply: r.reply })),
      exportText,
    }
  } finally {
    await server.close()
    ws.remove()
  }
}
