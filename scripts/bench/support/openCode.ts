// OpenCode's per-step read of a session, modelled for bench:peers from its upstream source (packages/opencode/src/
// session/message-v2.ts, prompt.ts; SQLite layout from its session SQL schema), in this project's own words:
//
// - every step of the prompt loop calls `filterCompacted(stream(sessionID))`: `stream` is a lazy generator over pages
//   of 50 messages newest first (a `LIMIT 51` query on (session_id, time_created, id), then one `IN (…)` query for the
//   page's parts ordered by (message_id, id), each row's JSON `data` parsed); `filterCompacted` consumes it and stops
//   at the latest completed compaction's tail start, so only the pages back to there are read (not the whole session);
// - then the reorder (marker, summary, tail, later turns), `latest` (the newest user / assistant / finished by id) and
//   `toModelMessages` (UI messages handed to the AI SDK's `convertToModelMessages`).
//
// The same algorithm runs on objects already in memory (`InMemory`): the floor of OpenCode's approach, with no
// SQLite and no JSON. Both are fed by `mirror`, which turns pivot's events into OpenCode's rows and objects.
import type { DatabaseSync, StatementSync } from "node:sqlite"
import { Conversation, type Events, type Message, Tokens } from "@pivot/core"
import { convertToModelMessages, type ModelMessage, type UIMessage } from "ai"

/** A stored message as OpenCode keeps it: its info and its parts (OpenCode's field names). */
export interface WithParts {
  readonly info: Info
  parts: Array<Part>
}

type Info = Record<string, unknown> & {
  readonly id: string
  readonly role: "user" | "assistant"
  readonly parentID?: string
  readonly summary?: boolean
  readonly finish?: string
  readonly error?: unknown
}

type Part = Record<string, unknown> & { readonly id: string; readonly type: string }

const CLEARED = "[Old tool result content cleared]"
const MARKER = "What did we do so far?"

// ---- pivot's messages in OpenCode's shape ---------------------------------------------------------------------------

const tokensOf = (t: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number }) => ({
  input: t.input,
  output: t.output,
  reasoning: t.reasoning,
  cache: { read: t.cacheRead, write: t.cacheWrite },
})

const infoOf = (sessionID: string, m: Message.Message): Info =>
  m.role === "user"
    ? {
        id: m.id,
        sessionID,
        role: "user",
        time: { created: m.createdAt },
        agent: m.agent ?? "build",
        model: { providerID: m.model?.providerId ?? "bench", modelID: m.model?.modelId ?? "bench" },
      }
    : {
        id: m.id,
        sessionID,
        role: "assistant",
        time: { created: m.createdAt, ...(m.completedAt === undefined ? {} : { completed: m.completedAt }) },
        parentID: m.parentId,
        modelID: m.model.modelId,
        providerID: m.model.providerId,
        mode: m.mode ?? (m.summary === true ? "compaction" : "build"),
        agent: m.agent ?? (m.summary === true ? "compaction" : "build"),
        path: { cwd: "/work", root: "/work" },
        cost: m.cost ?? 0,
        tokens: tokensOf(m.tokens),
        ...(m.summary === true ? { summary: true } : {}),
        ...(m.finish === undefined ? {} : { finish: m.finish }),
        ...(m.error === undefined ? {} : { error: m.error }),
      }

const partOf = (sessionID: string, messageID: string, p: Message.Message["parts"][number]): Part => {
  const base = { id: p.id, sessionID, messageID }
  switch (p.type) {
    case "compaction":
      return {
        ...base,
        type: "compaction",
        auto: p.auto,
        ...(p.overflow === undefined ? {} : { overflow: p.overflow }),
        ...(p.tailStartId === undefined ? {} : { tail_start_id: p.tailStartId }),
      }
    case "tool": {
      const s = p.state
      const time = {
        start: ("startedAt" in s ? s.startedAt : undefined) ?? 0,
        end: ("endedAt" in s ? s.endedAt : undefined) ?? 0,
      }
      const state =
        s.status === "completed"
          ? {
              status: "completed",
              input: s.input,
              output: s.output,
              title: s.title ?? "",
              metadata: s.metadata ?? {},
              time: s.compactedAt === undefined ? time : { ...time, compacted: s.compactedAt },
            }
          : s.status === "error"
            ? { status: "error", input: s.input, error: s.error, metadata: s.metadata ?? {}, time }
            : { status: s.status, input: s.input, time: { start: 0 } }
      return { ...base, type: "tool", callID: p.callId, tool: p.tool, state }
    }
    default:
      return { ...base, ...p }
  }
}

/** A pivot message as OpenCode stores it. */
export const withParts = (sessionID: string, m: Message.Message): WithParts => ({
  info: infoOf(sessionID, m),
  parts: m.parts.map((p) => partOf(sessionID, m.id, p)),
})

// ---- the algorithm, on any newest-first iterable ---------------------------------------------------------------------

const compactionOf = (m: WithParts) =>
  m.parts.find((p) => p.type === "compaction") as (Part & { readonly tail_start_id?: string }) | undefined

/** Pass 1 (stops at the boundary, so a lazy source is read no further) and pass 2 (the reorder). */
export const filterCompacted = (newestFirst: Iterable<WithParts>): Array<WithParts> => {
  const result: Array<WithParts> = []
  const completed = new Set<string>()
  let retain: string | undefined
  for (const m of newestFirst) {
    result.push(m)
    if (retain !== undefined) {
      if (m.info.id === retain) break
      continue
    }
    if (m.info.role === "user" && completed.has(m.info.id)) {
      const part = compactionOf(m)
      if (part === undefined) continue
      if (part.tail_start_id === undefined) break
      retain = part.tail_start_id
      if (retain === m.info.id) break
      continue
    }
    if (m.info.role === "assistant" && m.info.summary === true && m.info.finish !== undefined && !m.info.error)
      completed.add(m.info.parentID!)
  }
  result.reverse()
  const ci = result.findLastIndex((m) => m.info.role === "user" && compactionOf(m)?.tail_start_id !== undefined)
  if (ci === -1) return result
  const marker = result[ci]!
  const si = result.findIndex(
    (m, i) => i > ci && m.info.role === "assistant" && m.info.summary === true && m.info.parentID === marker.info.id,
  )
  const tail = compactionOf(marker)!.tail_start_id
  const ti = result.findIndex((m) => m.info.id === tail)
  return ti >= 0 && ti < ci && si > ci
    ? [...result.slice(ci, si + 1), ...result.slice(ti, ci), ...result.slice(si + 1)]
    : result
}

/** The loop's `latest`: the newest user, assistant and finished assistant by id (the reorder broke array order). */
export const latest = (msgs: ReadonlyArray<WithParts>) => {
  let user: Info | undefined
  let assistant: Info | undefined
  let finished: Info | undefined
  for (const m of msgs) {
    if (m.info.role === "user" && (user === undefined || m.info.id > user.id)) user = m.info
    if (m.info.role === "assistant") {
      if (assistant === undefined || m.info.id > assistant.id) assistant = m.info
      if (m.info.finish !== undefined && (finished === undefined || m.info.id > finished.id)) finished = m.info
    }
  }
  return { user, assistant, finished }
}

const toolOutput = (options: { readonly output: unknown }) =>
  typeof options.output === "string"
    ? { type: "text" as const, value: options.output }
    : { type: "json" as const, value: options.output as never }

/** `toModelMessages`: OpenCode's UI messages, converted by the AI SDK. */
export const toModelMessages = (msgs: ReadonlyArray<WithParts>): Promise<Array<ModelMessage>> => {
  const ui: Array<UIMessage> = []
  const tools = new Set<string>()
  for (const m of msgs) {
    if (m.parts.length === 0) continue
    if (m.info.role === "user") {
      const parts: UIMessage["parts"] = []
      for (const p of m.parts) {
        if (p.type === "text" && p.ignored !== true) parts.push({ type: "text", text: p.text as string })
        if (p.type === "compaction") parts.push({ type: "text", text: MARKER })
      }
      ui.push({ id: m.info.id, role: "user", parts })
      continue
    }
    if (m.info.error) continue
    const parts: Array<Record<string, unknown>> = []
    for (const p of m.parts) {
      if (p.type === "text") parts.push({ type: "text", text: p.text })
      if (p.type === "step-start") parts.push({ type: "step-start" })
      if (p.type === "reasoning") parts.push({ type: "reasoning", text: p.text })
      if (p.type === "tool") {
        tools.add(p.tool as string)
        const state = p.state as { status: string; input: unknown; output?: string; time: { compacted?: number } }
        if (state.status === "completed")
          parts.push({
            type: `tool-${p.tool}`,
            state: "output-available",
            toolCallId: p.callID,
            input: state.input,
            output: state.time.compacted === undefined ? state.output : CLEARED,
          })
      }
    }
    if (parts.length > 0) ui.push({ id: m.info.id, role: "assistant", parts } as unknown as UIMessage)
  }
  return convertToModelMessages(
    ui.filter((m) => m.parts.some((p) => p.type !== "step-start")),
    { tools: Object.fromEntries([...tools].map((t) => [t, { toModelOutput: toolOutput }])) as never },
  )
}

/**
 * The prune pass (opt-in upstream, run after the loop exits): `Session.messages` loads every message of the session,
 * then the walk from the newest skips the last two turns and stops at a summary or an output already cleared. Answers
 * the outputs it would clear (nothing is written: pivot's prunes reach these stores through `mirror`).
 */
export const prunePass = (messages: ReadonlyArray<WithParts>, protect: number, minimum: number): number => {
  let total = 0
  let pruned = 0
  let turns = 0
  let clear = 0
  walk: for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.info.role === "user") turns++
    if (turns < 2) continue
    if (m.info.role === "assistant" && m.info.summary === true) break
    for (let j = m.parts.length - 1; j >= 0; j--) {
      const p = m.parts[j]!
      const state = p.state as { status?: string; output?: string; time?: { compacted?: number } } | undefined
      if (p.type !== "tool" || state?.status !== "completed" || p.tool === "skill") continue
      if (state.time?.compacted !== undefined) break walk
      const estimate = Tokens.estimate(state.output!)
      total += estimate
      if (total <= protect) continue
      pruned += estimate
      clear++
    }
  }
  return pruned > minimum ? clear : 0
}

/** One step's read: the window, `latest`, and the model messages. */
export const step = async (newestFirst: Iterable<WithParts>) => {
  const msgs = filterCompacted(newestFirst)
  latest(msgs)
  return toModelMessages(msgs)
}

// ---- stores ----------------------------------------------------------------------------------------------------------

function* backwards<A>(items: ReadonlyArray<A>): Generator<A> {
  for (let i = items.length - 1; i >= 0; i--) yield items[i]!
}

/** The messages in memory, newest first on demand: OpenCode's algorithm with no SQLite and no JSON. */
export class InMemory {
  readonly messages: Array<WithParts> = []
  readonly byId = new Map<string, WithParts>()
  newestFirst(): Generator<WithParts> {
    return backwards(this.messages)
  }
  add(m: WithParts) {
    this.messages.push(m)
    this.byId.set(m.info.id, m)
  }
  updatePart(messageId: string, part: Part) {
    const m = this.byId.get(messageId)
    if (m !== undefined) m.parts = m.parts.map((p) => (p.id === part.id ? part : p))
  }
}

const PAGE = 50

/** OpenCode's `message` and `part` tables (its upstream columns and indexes) and its per-step read. */
export class OnSqlite {
  private readonly insertMessage: StatementSync
  private readonly insertPart: StatementSync
  private readonly updatePartRow: StatementSync
  private readonly first: StatementSync
  private readonly older: StatementSync
  private readonly partsOf = new Map<number, StatementSync>()
  // The newest time stamp, read on the first write: the query scans every message (its index leads with the session),
  // which a read-only first step (bench:restart, bench:peers' restart) does not do in OpenCode.
  private sequence: number | undefined
  readonly db: DatabaseSync
  readonly sessionID: string

  constructor(db: DatabaseSync, sessionID: string, create = true) {
    this.db = db
    this.sessionID = sessionID
    // OpenCode's connection settings.
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -64000;")
    if (create)
      db.exec(`CREATE TABLE IF NOT EXISTS message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
          time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS message_session_time_created_id_idx ON message (session_id, time_created, id);
        CREATE TABLE IF NOT EXISTS part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
          time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS part_message_id_id_idx ON part (message_id, id);
        CREATE INDEX IF NOT EXISTS part_session_idx ON part (session_id);`)
    this.insertMessage = db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)")
    this.insertPart = db.prepare("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)")
    this.updatePartRow = db.prepare("UPDATE part SET data = ?, time_updated = ? WHERE id = ?")
    const columns = "SELECT id, session_id, time_created, data FROM message WHERE session_id = ?"
    const order = `ORDER BY time_created DESC, id DESC LIMIT ${PAGE + 1}`
    this.first = db.prepare(`${columns} ${order}`)
    this.older = db.prepare(`${columns} AND (time_created < ? OR (time_created = ? AND id < ?)) ${order}`)
  }

  private tick(): number {
    this.sequence ??=
      (this.db.prepare("SELECT max(time_created) AS t FROM message").get() as { t: number | null }).t ?? 0
    return ++this.sequence
  }

  add(m: WithParts) {
    const t = this.tick()
    const { id, sessionID: _, ...info } = m.info
    this.insertMessage.run(id, this.sessionID, t, t, JSON.stringify(info))
    for (const p of m.parts) {
      const { id: partId, sessionID: _s, messageID: _m, ...data } = p
      this.insertPart.run(partId, id, this.sessionID, t, t, JSON.stringify(data))
    }
  }

  updatePart(_messageId: string, part: Part) {
    const { id, sessionID: _s, messageID: _m, ...data } = part
    this.updatePartRow.run(JSON.stringify(data), this.tick(), id)
  }

  private parts(ids: ReadonlyArray<string>) {
    let statement = this.partsOf.get(ids.length)
    if (statement === undefined) {
      statement = this.db.prepare(
        `SELECT id, message_id, session_id, data FROM part WHERE message_id IN (${ids.map(() => "?").join(",")}) ORDER BY message_id, id`,
      )
      this.partsOf.set(ids.length, statement)
    }
    return statement.all(...ids) as unknown as ReadonlyArray<Row & { readonly message_id: string }>
  }

  /** `Session.messages`: every message, oldest first (read through the same pages). */
  messages(): Array<WithParts> {
    return [...this.newestFirst()].reverse()
  }

  /** `stream`: pages of 50 newest first, each hydrated with one parts query; read lazily. */
  *newestFirst(): Generator<WithParts> {
    let cursor: { readonly time: number; readonly id: string } | undefined
    for (;;) {
      const rows = (cursor === undefined
        ? this.first.all(this.sessionID)
        : this.older.all(this.sessionID, cursor.time, cursor.time, cursor.id)) as unknown as ReadonlyArray<
        Row & { readonly time_created: number }
      >
      if (rows.length === 0) return
      const more = rows.length > PAGE
      const page = more ? rows.slice(0, PAGE) : rows
      const byMessage = new Map<string, Array<Part>>()
      for (const row of this.parts(page.map((r) => r.id))) {
        const part = { ...JSON.parse(row.data), id: row.id, sessionID: row.session_id, messageID: row.message_id }
        const list = byMessage.get(row.message_id)
        if (list === undefined) byMessage.set(row.message_id, [part])
        else list.push(part)
      }
      for (const row of page)
        yield {
          info: { ...JSON.parse(row.data), id: row.id, sessionID: row.session_id },
          parts: byMessage.get(row.id) ?? [],
        }
      if (!more) return
      const last = page[page.length - 1]!
      cursor = { time: last.time_created, id: last.id }
    }
  }
}

interface Row {
  readonly id: string
  readonly session_id: string
  readonly data: string
}

/**
 * Feeds pivot's events to OpenCode's stores as OpenCode would have written them: a message and its parts when it is
 * recorded, a part rewritten when a prune clears it or a compaction sets the marker's tail start. `plain` receives
 * every message an app without compaction keeps (markers and summaries are pivot's and OpenCode's, not the app's).
 */
export const mirror = (
  sessionID: string,
  stores: ReadonlyArray<InMemory | OnSqlite>,
  plain?: (message: Message.Message) => void,
) => {
  // Only messages a later event can change are kept (tool calls and markers).
  const changeable = new Map<string, Message.Message>()
  return (event: Events.Event) => {
    const added = Conversation.addedMessage(event)
    if (added !== undefined) {
      if (added.parts.some((p) => p.type === "tool" || p.type === "compaction")) changeable.set(added.id, added)
      const row = withParts(sessionID, added)
      for (const s of stores) s.add(row)
      if (plain !== undefined && !(added.role === "assistant" && added.summary === true) && !isMarker(added))
        plain(added)
      return
    }
    if (event._tag !== "PartCompacted" && event._tag !== "CompactionStarted" && event._tag !== "ToolResultRecorded")
      return
    const id = event._tag === "CompactionStarted" ? event.markerId : event.messageId
    const before = changeable.get(id)
    if (before === undefined) return
    // The one home of how these events change a message: Conversation.evolve, on that message alone.
    const alone = Conversation.evolve(Conversation.initial, { _tag: "UserMessageAdded", message: before } as never)
    const after = Conversation.get(Conversation.evolve(alone, event), before.id)!
    changeable.set(id, after)
    for (const [i, p] of after.parts.entries())
      if (p !== before.parts[i]) for (const s of stores) s.updatePart(id, partOf(sessionID, id, p))
  }
}

const isMarker = (m: Message.Message) => m.role === "user" && m.parts.some((p) => p.type === "compaction")
