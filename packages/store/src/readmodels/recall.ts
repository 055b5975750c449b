/**
 * The recall index read model: one row per recallable document (a pruned output, a finished summary) with its text,
 * searched in full text by `context_recall`. Its documents are a function of the conversation (`Recall.documents`).
 */
import { Conversation, Recall } from "@pivot/core"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { clearRows, insertAll, type ReadModel, readModel, type Sql, withoutSession } from "./ReadModel.ts"
import { touchedIds } from "./States.ts"

/** The recall index's projection: its documents are a function of the conversation (`Recall.documents`). */
export const projection = { name: "recall", version: 1 } as const

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

const recallRows = (sessionId: string, docs: ReadonlyArray<Recall.Document>) =>
  docs.map((doc) => ({
    session_id: sessionId,
    doc_id: doc.id,
    kind: doc.kind,
    message_id: doc.messageId,
    tool: doc.tool ?? null,
    body: doc.text,
  }))

export const model: ReadModel = readModel({
  name: projection.name,
  version: projection.version,
  table: "recall",
  key: ["doc_id"],
  expected: (sessionId, states) =>
    withoutSession(recallRows(sessionId, Recall.documents(Conversation.messages(states.window.conversation)))),
  rows: {
    clear: clearRows("pivot_rm_recall"),
    write: (sql, sessionId, states) =>
      insertAll(
        sql,
        "pivot_rm_recall",
        recallRows(sessionId, Recall.documents(Conversation.messages(states.window.conversation))),
      ),
    // A prune or a summary changes the documents of the messages the event names: rewrite those messages' rows.
    apply: (sql, sessionId, prev, next, event) =>
      Effect.gen(function* () {
        for (const id of new Set(touchedIds(event))) {
          const before = Conversation.get(prev.window.conversation, id)
          const after = Conversation.get(next.window.conversation, id)
          if (before === after || after === undefined) continue
          const was = before === undefined ? [] : Recall.documentsOf(before)
          const now = Recall.documentsOf(after)
          if (was.length === 0 && now.length === 0) continue
          if (was.length > 0)
            yield* sql`DELETE FROM pivot_rm_recall WHERE session_id = ${sessionId} AND message_id = ${id}`
          yield* insertAll(sql, "pivot_rm_recall", recallRows(sessionId, now))
        }
      }),
  },
})

interface RecallRow {
  readonly doc_id: string
  readonly kind: string
  readonly message_id: string
  readonly tool: string | null
  readonly body: string
}

const documentOf = (row: RecallRow): Recall.Document => ({
  id: row.doc_id,
  kind: row.kind === "summary" || row.kind === "input" ? row.kind : "output",
  messageId: row.message_id,
  ...(row.tool === null ? {} : { tool: row.tool }),
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
          sql<RecallRow>`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall, to_tsquery('simple', ${words.join(" | ")}) q WHERE session_id = ${sessionId} AND to_tsvector('simple', body) @@ q ORDER BY ts_rank_cd(to_tsvector('simple', body), q, 1) DESC, doc_id DESC LIMIT ${limit}`,
        orElse: () =>
          sql<RecallRow>`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall WHERE pivot_rm_recall MATCH ${fts5} AND session_id = ${sessionId} ORDER BY bm25(pivot_rm_recall), doc_id DESC LIMIT ${limit}`,
      }),
      (rows): ReadonlyArray<Recall.Document> => rows.map(documentOf),
    )
  // CJK terms match as substrings (a word index holds an unbroken CJK run as one word): the session's documents that
  // hold one of them or match a word are read and ranked by the scan's rule (`Recall.rank`).
  return Effect.map(
    sql.onDialectOrElse({
      pg: () =>
        sql<RecallRow>`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall WHERE session_id = ${sessionId} AND ${sql.or(
          [
            ...substrings.map((t) => sql`strpos(body, ${t}) > 0`),
            ...(words.length === 0
              ? []
              : [sql`to_tsvector('simple', body) @@ to_tsquery('simple', ${words.join(" | ")})`]),
          ],
        )}`,
      orElse: () =>
        sql<RecallRow>`SELECT doc_id, kind, message_id, tool, body FROM pivot_rm_recall WHERE session_id = ${sessionId} AND ${sql.or(
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
