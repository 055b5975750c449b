/**
 * pivot's MCP server (the official TypeScript SDK): `context_recall` and `context_usage` over a store's sessions,
 * read-only. It reads through a `Reader` (the store's sessions and one session's events, caught up with the store at
 * each call), so a session another process is writing — a Claude Code or Codex CLI session `pivot import --follow`
 * keeps importing — answers with what is stored at the moment of the call.
 */

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { type Events, Recall } from "@pivot/core"
import { z } from "zod"
import * as Tools from "./Tools.ts"

/** How the server reads the store. */
export interface Reader {
  /** The ids of the store's sessions. */
  readonly ids: () => Promise<ReadonlyArray<string>>
  /** One session's events, as stored now; undefined when the store has none for it. */
  readonly events: (sessionId: string) => Promise<ReadonlyArray<Events.Event> | undefined>
}

/** What the server is told when it starts. */
export interface Options {
  readonly reader: Reader
  /** The session the tools read when a call names none; default: the store's only session. */
  readonly session?: string | undefined
  readonly version: string
  /** The most characters one recall answer gives (default `Recall.DEFAULT_MAX_CHARS`). */
  readonly maxChars?: number | undefined
}

/** The tools' names, as clients list them. */
export const TOOLS = ["context_recall", "context_usage"] as const

const text = (value: string, isError = false) => ({ content: [{ type: "text" as const, text: value }], isError })

/** Builds the MCP server with pivot's tools; connect it to a transport (`StdioServerTransport`) to serve. */
export const make = (options: Options): McpServer => {
  const server = new McpServer(
    { name: "pivot", version: options.version },
    {
      instructions:
        "pivot keeps the full history of this session, including what a compaction dropped. Use context_recall to search it, to list what a pivot (compaction) dropped, and to read an original back by id; context_usage for the session's token and cache figures.",
    },
  )

  const sessionOf = async (asked: string | undefined) => {
    const wanted = asked ?? options.session
    const ids = await options.reader.ids()
    if (wanted === undefined) {
      if (ids.length === 1) return { sessionId: ids[0]! }
      return {
        error:
          ids.length === 0
            ? "the store holds no session"
            : `the store holds ${ids.length} sessions; pass one as session (${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", …" : ""})`,
      }
    }
    if (!ids.includes(wanted))
      return { error: `no session ${wanted} in the store (it holds ${ids.slice(0, 5).join(", ") || "none"})` }
    return { sessionId: wanted }
  }
  const withSession = async (
    asked: string | undefined,
    answer: (sessionId: string, events: ReadonlyArray<Events.Event>) => string,
  ) => {
    try {
      const chosen = await sessionOf(asked)
      if ("error" in chosen) return text(chosen.error, true)
      const events = await options.reader.events(chosen.sessionId)
      if (events === undefined) return text(`no session ${chosen.sessionId} in the store`, true)
      return text(answer(chosen.sessionId, events))
    } catch (error) {
      return text(`pivot could not read the store: ${error instanceof Error ? error.message : String(error)}`, true)
    }
  }

  const session = z.string().optional().describe("the pivot session id (default: the server's session)")
  server.registerTool(
    "context_recall",
    {
      title: "Recall what left the context",
      description: Recall.TOOL_DESCRIPTION,
      inputSchema: {
        id: z.string().optional().describe(Recall.ARG_DESCRIPTIONS.id),
        query: z.string().optional().describe(Recall.ARG_DESCRIPTIONS.query),
        offset: z.number().int().min(0).optional().describe(Recall.ARG_DESCRIPTIONS.offset),
        pivot: z.number().int().min(0).optional().describe(Recall.ARG_DESCRIPTIONS.pivot),
        session,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => withSession(args.session, (_, events) => Tools.recall(events, args, options.maxChars).text),
  )
  server.registerTool(
    "context_usage",
    {
      title: "Context usage",
      description:
        "The session's model calls and their tokens as billed: uncached input, cache reads and writes, output, the cache hit ratio, the compactions, and the last call's context size.",
      inputSchema: { session },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) => withSession(args.session, (sessionId, events) => Tools.usage(sessionId, events)),
  )
  return server
}
