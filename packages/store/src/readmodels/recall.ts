/**
 * The recall index read model: one row per recallable document (a pruned output, a finished summary, every part of
 * a message a pivot summarised) with its text and the pivot it fell behind, searched in full text by
 * `context_recall`. Its documents are a function of the conversation and the pivots (`Recall.documents`).
 */
import { Conversation, Recall } from "@pivot/core"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { runAll } from "../internal/migrations.ts"
import { CHUNK, clearRows, insertAll, type ReadModel, readModel, type Sql, withoutSession } from "./ReadModel.ts"
import { type States, touchedIds } from "./States.ts"

/**
 * The recall index's projection: its documents are a function of the conversation and the pivots
 * (`Recall.documents`). Version 2 (issue 31) added the parts of every message behind a pivot and the `pivot` column.
 */
export const projection = { name: "recall", version: 2 } as const

// The recall documents: on SQLite an FTS5 table holding them (its other columns unindexed; `secure-delete` so a
// forgotten session's words leave the full-text index too, ADR 0006), on PostgreSQL a table with a GIN index over
// `to_tsvector('simple', body)`. Both tokenise words without stemming, as the memory scan (`Recall.words`) does.
/** Its table (migration 2). */
export const create = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function* () {
        yield* sql`CREATE TABLE pivot_rm_recall (
  session_id TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  message_id TEXT NOT NULL,
  tool TEXT,
  body TEXT NOT NULL,
  PRIMARY KEY (session_id, doc_id)
)`
        yield* sql`CREATE INDEX pivot_rm_recall_body ON pivot_rm_recall USING GIN (to_tsvector('simple', body))`
      }),
    orElse: () =>
      Effect.gen(function* () {
        yield* sql`CREATE VIRTUAL TABLE pivot_rm_recall USING fts5(session_id UNINDEXED, doc_id UNINDEXED, kind UNINDEXED, message_id UNINDEXED, tool UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 0')`
        yield* sql`INSERT INTO pivot_rm_recall (pivot_rm_recall, rank) VALUES ('secure-delete', 1)`
      }),
  })
})

/** SQLite: the table's newest form (migration 3), also in a new SQLite store's one script (ADR 0061). */
export const sqliteDdl = [
  "CREATE VIRTUAL TABLE pivot_rm_recall USING fts5(session_id UNINDEXED, doc_id UNINDEXED, kind UNINDEXED, message_id UNINDEXED, tool UNINDEXED, pivot UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 0')",
  "INSERT INTO pivot_rm_recall (pivot_rm_recall, rank) VALUES ('secure-delete', 1)",
] as const

/**
 * The table again with a `pivot` column (migration 3, issue 31): the summary id of the pivot a document fell behind.
 * An FTS5 table cannot gain a column, so the table is dropped and created anew; the version bump of the projection
 * rebuilds its rows from the events.
 */
export const recreate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP TABLE pivot_rm_recall`
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function* () {
        yield* sql`CREATE TABLE pivot_rm_recall (
  session_id TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  message_id TEXT NOT NULL,
  tool TEXT,
  pivot TEXT,
  body TEXT NOT NULL,
  PRIMARY KEY (session_id, doc_id)
)`
        yield* sql`CREATE INDEX pivot_rm_recall_body ON pivot_rm_recall USING GIN (to_tsvector('simple', body))`
        yield* sql`CREATE INDEX pivot_rm_recall_message ON pivot_rm_recall (session_id, message_id)`
      }),
    orElse: () => runAll(sqliteDdl),
  })
})

const recallRows = (sessionId: string, docs: ReadonlyArray<Recall.Document>) =>
  docs.map((doc) => ({
    session_id: sessionId,
    doc_id: doc.id,
    kind: doc.kind,
    message_id: doc.messageId,
    tool: doc.tool ?? null,
    pivot: doc.pivot ?? null,
    body: doc.text,
  }))

/** Every document of a session's states: the conversation's, with the pivots of the compaction history. */
const allDocuments = (states: States) =>
  Recall.documents(
    Conversation.messages(states.window.conversation),
    Recall.behindMap(Recall.pivotsOf(states.history.entries)),
  )

/** The pivot a message already fell behind, as its rows say (a message behind none, or without rows: undefined). */
const storedPivot = (sql: Sql, sessionId: string, messageId: string) =>
  Effect.map(
    sql<{
      readonly pivot: string | null
    }>`SELECT pivot FROM pivot_rm_recall WHERE session_id = ${sessionId} AND message_id = ${messageId} AND pivot IS NOT NULL LIMIT 1`,
    (rows) => rows[0]?.pivot ?? undefined,
  )

/** Which of `ids` already fell behind a pivot, as their rows say (one query per `CHUNK` ids). */
const storedPivots = (sql: Sql, sessionId: string, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const out = new Set<string>()
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = yield* sql<{
        readonly message_id: string
      }>`SELECT DISTINCT message_id FROM pivot_rm_recall WHERE session_id = ${sessionId} AND pivot IS NOT NULL AND ${sql.in("message_id", ids.slice(i, i + CHUNK))}`
      for (const row of rows) out.add(row.message_id)
    }
    return out
  })

/** The pivot whose head holds a message, among the compaction entries held (first wins, as `Recall.behindMap`). */
const heldPivot = (states: States, messageId: string): string | undefined => {
  for (const p of Recall.pivotsOf(states.history.entries.filter((e) => e.status !== undefined)))
    if (p.head.includes(messageId as never)) return p.summaryId
  return undefined
}

export const model: ReadModel = readModel({
  name: projection.name,
  version: projection.version,
  table: "recall",
  key: ["doc_id"],
  expected: (sessionId, states) => withoutSession(recallRows(sessionId, allDocuments(states))),
  rows: {
    clear: clearRows("pivot_rm_recall"),
    write: (sql, sessionId, states) => insertAll(sql, "pivot_rm_recall", recallRows(sessionId, allDocuments(states))),
    // A prune or a summary changes the documents of the messages the event names, and a summary that forms a pivot
    // makes every message of its head recallable: rewrite those messages' rows.
    apply: (sql, sessionId, prev, next, event) =>
      Effect.gen(function* () {
        const formed = event._tag === "SummaryFinished" ? formedPivot(prev, next, event.markerId) : undefined
        if (formed !== undefined) {
          const head = formed.head.flatMap((id) => {
            const message = Conversation.get(next.window.conversation, id)
            return message === undefined ? [] : [message]
          })
          // Behind an earlier pivot already (a pinned message summarised again): the first pivot stands. One query and
          // one delete for the whole head: the table's message column is not indexed (FTS5), so each is a scan.
          const behind = yield* storedPivots(
            sql,
            sessionId,
            head.map((m) => m.id),
          )
          const rewritten = head.flatMap((message) => {
            if (behind.has(message.id)) return []
            const now = Recall.documentsOf(message, formed.summaryId)
            return now.length === 0 ? [] : [{ id: message.id, now }]
          })
          for (let i = 0; i < rewritten.length; i += CHUNK)
            yield* sql`DELETE FROM pivot_rm_recall WHERE session_id = ${sessionId} AND ${sql.in(
              "message_id",
              rewritten.slice(i, i + CHUNK).map((r) => r.id),
            )}`
          yield* insertAll(
            sql,
            "pivot_rm_recall",
            rewritten.flatMap((r) => recallRows(sessionId, r.now)),
          )
        }
        const added = Conversation.addedMessage(event)?.id
        for (const id of new Set(touchedIds(event))) {
          const before = Conversation.get(prev.window.conversation, id)
          const after = Conversation.get(next.window.conversation, id)
          if (before === after || after === undefined) continue
          // A message this event adds is behind no pivot yet; an older one may be.
          const pivot = id === added ? undefined : ((yield* storedPivot(sql, sessionId, id)) ?? heldPivot(next, id))
          const was = before === undefined ? [] : Recall.documentsOf(before, pivot)
          const now = Recall.documentsOf(after, pivot)
          if (was.length === 0 && now.length === 0) continue
          if (was.length > 0)
            yield* sql`DELETE FROM pivot_rm_recall WHERE session_id = ${sessionId} AND message_id = ${id}`
          yield* insertAll(sql, "pivot_rm_recall", recallRows(sessionId, now))
        }
      }),
  },
})

/** The pivot a `SummaryFinished` formed (its compaction entry turned finished), if it formed one. */
const formedPivot = (prev: States, next: States, markerId: string): Recall.Pivot | undefined => {
  const entry = next.history.entries.findLast((e) => e.markerId === markerId)
  if (entry === undefined || entry.status !== "finished" || entry.summaryId === undefined) return undefined
  const was = prev.history.entries.findLast((e) => e.markerId === markerId)
  if (was?.status === "finished") return undefined
  return { number: 0, markerId: entry.markerId, summaryId: entry.summaryId, head: entry.plan?.head ?? [] }
}

interface RecallRow {
  readonly doc_id: string
  readonly kind: string
  readonly message_id: string
  readonly tool: string | null
  readonly pivot: string | null
  readonly body: string
}

const KINDS: ReadonlySet<string> = new Set<Recall.Kind>([
  "output",
  "summary",
  "user",
  "assistant",
  "reasoning",
  "input",
])

const documentOf = (row: RecallRow): Recall.Document => ({
  id: row.doc_id,
  kind: KINDS.has(row.kind) ? (row.kind as Recall.Kind) : "output",
  messageId: row.message_id,
  ...(row.tool === null ? {} : { tool: row.tool }),
  ...(row.pivot === null ? {} : { pivot: row.pivot }),
  text: row.body,
})

/**
 * The session's documents matching any word of `query`, best first (FTS5 `bm25` on SQLite, `ts_rank_cd` normalised
 * by length on PostgreSQL; ties newest id first), at most `limit`.
 */
export const search = (sql: Sql, sessionId: string, query: string, limit: number) => {
  const terms = Recall.terms(query)
  if (terms.length === 0 || limit <= 0) return Effect.succeed<ReadonlyArray<Recall.Document>>([])
  const { words, substrings } = Recall.termKinds(terms)
  // Terms are letters and digits only, so quoting each makes a valid FTS5 query whatever the model typed.
  const fts5 = words.map((t) => `"${t}"`).join(" OR ")
  if (substrings.length === 0)
    return Effect.map(
      sql.onDialectOrElse({
        pg: () =>
          sql<RecallRow>`SELECT doc_id, kind, message_id, tool, pivot, body FROM pivot_rm_recall, to_tsquery('simple', ${words.join(" | ")}) q WHERE session_id = ${sessionId} AND to_tsvector('simple', body) @@ q ORDER BY ts_rank_cd(to_tsvector('simple', body), q, 1) DESC, doc_id DESC LIMIT ${limit}`,
        orElse: () =>
          sql<RecallRow>`SELECT doc_id, kind, message_id, tool, pivot, body FROM pivot_rm_recall WHERE pivot_rm_recall MATCH ${fts5} AND session_id = ${sessionId} ORDER BY bm25(pivot_rm_recall), doc_id DESC LIMIT ${limit}`,
      }),
      (rows): ReadonlyArray<Recall.Document> => rows.map(documentOf),
    )
  // CJK terms match as substrings (a word index holds an unbroken CJK run as one word): the session's documents that
  // hold one of them or match a word are read and ranked by the scan's rule (`Recall.rank`).
  return Effect.map(
    sql.onDialectOrElse({
      pg: () =>
        sql<RecallRow>`SELECT doc_id, kind, message_id, tool, pivot, body FROM pivot_rm_recall WHERE session_id = ${sessionId} AND ${sql.or(
          [
            ...substrings.map((t) => sql`strpos(body, ${t}) > 0`),
            ...(words.length === 0
              ? []
              : [sql`to_tsvector('simple', body) @@ to_tsquery('simple', ${words.join(" | ")})`]),
          ],
        )}`,
      orElse: () =>
        sql<RecallRow>`SELECT doc_id, kind, message_id, tool, pivot, body FROM pivot_rm_recall WHERE session_id = ${sessionId} AND ${sql.or(
          [
            ...substrings.map((t) => sql`instr(body, ${t}) > 0`),
            ...(words.length === 0
              ? []
              : [sql`rowid IN (SELECT rowid FROM pivot_rm_recall WHERE pivot_rm_recall MATCH ${fts5})`]),
          ],
        )}`,
    }),
    (rows): ReadonlyArray<Recall.Document> => Recall.rank(rows.map(documentOf), query, limit),
  )
}
