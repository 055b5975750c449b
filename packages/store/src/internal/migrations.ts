// The store's tables, created through effect's sql Migrator. Migrations are append-only: a released migration is
// never edited, a change is a new numbered entry.
import * as Effect from "effect/Effect"
import { Migrator, SqlClient } from "effect/sql"

/** The table the Migrator records applied migrations in. */
export const migrationsTable = "pivot_migrations"

/** The id of the newest migration this version of pivot knows. */
export const latestMigration = 2

/** The columns `pivot_events` must have; a table without them is not a pivot store. */
export const eventColumns = [
  "position",
  "event_id",
  "stream",
  "stream_version",
  "type",
  "schema_version",
  "data",
  "metadata",
  "recorded_at",
] as const

// `position` is the global order. On SQLite it is the rowid (assigned max + 1 under the write lock, never reused
// because rows are never deleted); on Postgres an identity column, assigned under the store's append lock.
// UNIQUE (stream, stream_version) is the last line of defence against two writers taking the same version.
const createEvents = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () => sql`CREATE TABLE pivot_events (
  position BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id TEXT NOT NULL,
  stream TEXT NOT NULL,
  stream_version INTEGER NOT NULL,
  type TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT,
  recorded_at BIGINT NOT NULL,
  CONSTRAINT pivot_events_event_id_key UNIQUE (event_id),
  CONSTRAINT pivot_events_stream_version_key UNIQUE (stream, stream_version)
)`,
    orElse: () => sql`CREATE TABLE pivot_events (
  position INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  stream TEXT NOT NULL,
  stream_version INTEGER NOT NULL,
  type TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT,
  recorded_at INTEGER NOT NULL,
  CONSTRAINT pivot_events_event_id_key UNIQUE (event_id),
  CONSTRAINT pivot_events_stream_version_key UNIQUE (stream, stream_version)
) STRICT`,
  })
})

/** The table of per-stream data keys (crypto-shredding): one row per stream that has sealed fields. */
export const keysTable = "pivot_keys"

// One key per stream; deleting the row is what erases the stream's sealed fields. `key_id` is written in every
// envelope, so a stream given a new key after a forget never mistakes old envelopes for new ones.
const createKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () => sql`CREATE TABLE pivot_keys (
  stream TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  key TEXT NOT NULL,
  created_at BIGINT NOT NULL
)`,
    orElse: () => sql`CREATE TABLE pivot_keys (
  stream TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  key TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT`,
  })
})

/** Applies the pending migrations; safe to run from several processes at once. */
export const run = Migrator.make({})({
  table: migrationsTable,
  loader: Migrator.fromRecord({ "1_create_events": createEvents, "2_create_keys": createKeys }),
})
