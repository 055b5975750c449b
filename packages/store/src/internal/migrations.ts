// The store's tables, created through effect's sql Migrator. Migrations are append-only: a released migration is
// never edited, a change is a new numbered entry.
import * as Effect from "effect/Effect"
import { Migrator, SqlClient, type SqlError } from "effect/sql"

/** The table the Migrator records applied migrations in. */
export const migrationsTable = "pivot_migrations"

/** The id of the newest migration this version of pivot knows. */
export const latestMigration = 4

/** Runs DDL statements (no parameters) in order; each table's statements have one home, shared with `script`. */
export const runAll = (statements: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (const statement of statements) yield* sql.unsafe(statement)
  })

/** SQLite: statements as one script for `exec`. */
export const script = (statements: ReadonlyArray<string>): string => statements.map((s) => `${s};`).join("\n")

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
// because rows are never deleted). On Postgres it was an identity column assigned under a store-wide append lock;
// since migration 4 it is assigned after commit, in commit order, by the sequencer (see `commitOrder` below).
// UNIQUE (stream, stream_version) is the last line of defence against two writers taking the same version.
const eventsSqlite = `CREATE TABLE pivot_events (
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
) STRICT`

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
    orElse: () => sql.unsafe(eventsSqlite),
  })
})

/** The table of per-stream data keys (crypto-shredding): one row per stream that has sealed fields. */
export const keysTable = "pivot_keys"

// One key per stream; deleting the row is what erases the stream's sealed fields. `key_id` is written in every
// envelope, so a stream given a new key after a forget never mistakes old envelopes for new ones.
const keysSqlite = `CREATE TABLE pivot_keys (
  stream TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  key TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT`

const createKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () => sql`CREATE TABLE pivot_keys (
  stream TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  key TEXT NOT NULL,
  created_at BIGINT NOT NULL
)`,
    orElse: () => sql.unsafe(keysSqlite),
  })
})

/** The table of snapshots: the latest checkpoint of each stream's folded state (an optimisation, see Snapshot.ts). */
export const snapshotsTable = "pivot_snapshots"

const snapshotsSqlite = `CREATE TABLE pivot_snapshots (
  stream TEXT PRIMARY KEY,
  stream_version INTEGER NOT NULL,
  format TEXT NOT NULL,
  checksum TEXT NOT NULL,
  data TEXT NOT NULL,
  recorded_at INTEGER NOT NULL
) STRICT`

const createSnapshots = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () => sql`CREATE TABLE pivot_snapshots (
  stream TEXT PRIMARY KEY,
  stream_version INTEGER NOT NULL,
  format TEXT NOT NULL,
  checksum TEXT NOT NULL,
  data TEXT NOT NULL,
  recorded_at BIGINT NOT NULL
)`,
    orElse: () => sql.unsafe(snapshotsSqlite),
  })
})

// Postgres: positions in commit order without one store-wide append lock (ADR 0012). Each row gets `seq`, its insert
// order, when its append inserts it; `position` stays NULL until the row is committed and a short sequencing
// transaction under the store-wide lock numbers every committed unnumbered row, in `seq` order, after the largest
// position so far. Existing rows keep their positions (their `seq` values are just unique numbers). `position` loses
// its NOT NULL (a primary key cannot have it) and stays unique; `seq` becomes the primary key; a partial index
// finds the unnumbered rows at once. SQLite serialises writers itself (BEGIN IMMEDIATE), so nothing changes there.
// The sequencer, one statement for the client: the store-wide lock is held from the lock call to the commit of the
// statement's own transaction, never across a round trip to a (possibly busy) client. VOLATILE: the UPDATE takes a
// fresh snapshot after the lock is granted, so it sees every earlier sequencer's numbers. `wait => false` gives up
// at once when another sequencer holds the lock (it numbers the same rows). `channel` (if not null) is notified of
// the new head when rows were numbered; the notification is delivered at commit. No bitmap scans: every numbered row
// leaves a dead `position IS NULL` index entry until vacuum; a plain index scan marks each dead entry the first time
// and skips it from then on, where a bitmap scan (the planner's choice for IS NULL) visits every one of them on every
// call — an append cost that grew with history between vacuums (×8–11 from 1k to 100k events in bench:scale).
const sequenceFunction = `CREATE FUNCTION pivot_sequence(wait boolean, channel text)
RETURNS TABLE (numbered_seq bigint, numbered_position bigint)
LANGUAGE plpgsql VOLATILE SET enable_bitmapscan = off AS $$
DECLARE
  head bigint;
BEGIN
  IF wait THEN
    PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.pivot_events'));
  ELSIF NOT pg_try_advisory_xact_lock(hashtext(current_schema() || '.pivot_events')) THEN
    RETURN;
  END IF;
  RETURN QUERY
    UPDATE pivot_events AS e SET position = n.position
    FROM (
      SELECT u.seq, (SELECT COALESCE(MAX(m.position), 0) FROM pivot_events AS m) + row_number() OVER (ORDER BY u.seq)
        AS position
      FROM pivot_events AS u WHERE u.position IS NULL
    ) AS n
    WHERE e.seq = n.seq
    RETURNING e.seq, e.position;
  IF FOUND AND channel IS NOT NULL THEN
    SELECT MAX(m.position) INTO head FROM pivot_events AS m;
    PERFORM pg_notify(channel, head::text);
  END IF;
END
$$`

// An append in one statement (the store's fast path: no inline hook, no sealed field, not inside a caller's
// transaction): lock the stream, check duplicates and the expected version, insert the rows without positions. The
// statement is its own transaction; the caller then calls `pivot_sequence`. Two round trips per append instead of
// six. `expected`: -1 any, -2 no-stream, -3 stream-exists, n >= 0 exact. `rows`: a JSON array of {id, type, version,
// data, metadata} (data and metadata as stored text), in stream order.
const appendFunction = `CREATE FUNCTION pivot_append(p_stream text, p_expected bigint, p_rows json, p_recorded_at bigint)
RETURNS TABLE (outcome text, existing text[], head_version bigint, head_position bigint, seqs bigint[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_ids text[];
  v_existing text[];
  v_version bigint;
  v_position bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.pivot_events'), hashtext(p_stream));
  v_ids := ARRAY(SELECT r.id FROM json_to_recordset(p_rows) AS r(id text));
  IF cardinality(v_ids) > 0 THEN
    v_existing := ARRAY(SELECT e.event_id FROM pivot_events AS e WHERE e.event_id = ANY(v_ids));
    IF cardinality(v_existing) > 0 THEN
      RETURN QUERY SELECT 'duplicate'::text, v_existing, NULL::bigint, NULL::bigint, NULL::bigint[];
      RETURN;
    END IF;
  END IF;
  SELECT e.stream_version, e.position INTO v_version, v_position
    FROM pivot_events AS e WHERE e.stream = p_stream ORDER BY e.stream_version DESC LIMIT 1;
  IF NOT FOUND THEN
    v_version := 0;
    v_position := 0;
  END IF;
  IF NOT (p_expected = -1 OR (p_expected = -2 AND v_version = 0) OR (p_expected = -3 AND v_version > 0)
          OR p_expected = v_version) THEN
    RETURN QUERY SELECT 'version'::text, NULL::text[], v_version, v_position, NULL::bigint[];
    RETURN;
  END IF;
  IF cardinality(v_ids) = 0 THEN
    RETURN QUERY SELECT 'ok'::text, NULL::text[], v_version, v_position, ARRAY[]::bigint[];
    RETURN;
  END IF;
  RETURN QUERY
    WITH inserted AS (
      INSERT INTO pivot_events (event_id, stream, stream_version, type, schema_version, data, metadata, recorded_at)
      SELECT r.id, p_stream, v_version + r.n, r.type, r.version, r.data, r.metadata, p_recorded_at
        FROM ROWS FROM (json_to_recordset(p_rows) AS (id text, type text, version integer, data text, metadata text))
          WITH ORDINALITY AS r(id, type, version, data, metadata, n)
        ORDER BY r.n
      RETURNING pivot_events.seq
    )
    SELECT 'ok'::text, NULL::text[], v_version + cardinality(v_ids), NULL::bigint, array_agg(inserted.seq)
      FROM inserted;
END
$$`

const commitOrder = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function* () {
        yield* sql`ALTER TABLE pivot_events ALTER COLUMN position DROP IDENTITY IF EXISTS`
        yield* sql`ALTER TABLE pivot_events DROP CONSTRAINT IF EXISTS pivot_events_pkey`
        yield* sql`ALTER TABLE pivot_events ALTER COLUMN position DROP NOT NULL`
        yield* sql`ALTER TABLE pivot_events ADD COLUMN seq BIGINT GENERATED ALWAYS AS IDENTITY`
        yield* sql`ALTER TABLE pivot_events ADD CONSTRAINT pivot_events_pkey PRIMARY KEY (seq)`
        yield* sql`ALTER TABLE pivot_events ADD CONSTRAINT pivot_events_position_key UNIQUE (position)`
        yield* sql`CREATE INDEX pivot_events_unsequenced ON pivot_events (seq) WHERE position IS NULL`
        yield* sql.unsafe(sequenceFunction)
        yield* sql.unsafe(appendFunction)
      }),
    orElse: () => Effect.void,
  })
})

const migrations = {
  "1_create_events": createEvents,
  "2_create_keys": createKeys,
  "3_create_snapshots": createSnapshots,
  "4_commit_order": commitOrder,
}

/** Applies the pending migrations; safe to run from several processes at once. */
export const run = Migrator.make({})({ table: migrationsTable, loader: Migrator.fromRecord(migrations) })

/**
 * SQLite: the table effect's Migrator keeps in `table`, with `ids` (`"<id>_<name>"`) recorded as applied, as the
 * Migrator itself would have created and filled it (the same DDL, `created_at` by its default).
 */
export const recordedSqlite = (table: string, ids: ReadonlyArray<string>): string => {
  const rows = ids.map((key) => {
    const at = key.indexOf("_")
    return `(${Number.parseInt(key.slice(0, at), 10)}, '${key.slice(at + 1)}')`
  })
  return `CREATE TABLE "${table}" (
  migration_id integer PRIMARY KEY NOT NULL,
  created_at datetime NOT NULL DEFAULT current_timestamp,
  name VARCHAR(255) NOT NULL
);
INSERT INTO "${table}" (migration_id, name) VALUES ${rows.join(", ")};`
}

/**
 * SQLite: a new store's tables at the newest migration, in one script (ADR 0061) — what `run` leaves in an empty
 * database, without its per-migration round trips. `freshSchema.int.test.ts` checks the two give the same database;
 * a new migration must extend this script too.
 */
export const freshSqlite = `${recordedSqlite(migrationsTable, Object.keys(migrations))}
${script([eventsSqlite, keysSqlite, snapshotsSqlite])}`

/** The newest migration `table` records (0 for none); fails when the table does not exist yet. One read. */
export const newestApplied = (sql: SqlClient.SqlClient, table: string) =>
  Effect.map(sql<{ readonly id: number | string | null }>`SELECT MAX(migration_id) AS id FROM ${sql(table)}`, (rows) =>
    Number(rows[0]?.id ?? 0),
  )

/**
 * Effect's migrator over `migrations` (`"<id>_<name>"` → the migration) recorded in `table`, skipped when the table
 * already records the newest of them (issue 32): every restart but the first then costs one read instead of the
 * migrator's write transaction, which waits for any other process's writer. The migrator commits its migrations in one
 * transaction, so seeing the newest applied means every one is.
 */
export const migrateUnlessCurrent = (
  table: string,
  migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>,
): Effect.Effect<void, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> => {
  const newest = Math.max(...Object.keys(migrations).map((key) => Number.parseInt(key, 10)))
  const migrate = Migrator.make({})({ table, loader: Migrator.fromRecord(migrations) })
  return Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const applied = yield* Effect.result(newestApplied(sql, table))
    if (applied._tag === "Success" && applied.success === newest) return
    yield* Effect.asVoid(migrate)
  })
}
