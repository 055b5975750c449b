// Positions in commit order on PostgreSQL (ADR 0012): appends to different streams run in parallel and are numbered
// after they commit. Several stores (separate pools, as separate processes would be) append concurrently while a
// subscriber on yet another store reads: nothing lost, nothing repeated, positions strictly increasing. Rows a writer
// committed but never numbered (killed between its two transactions) get positions on the next read. A store made
// by the schema-2 pivot (identity positions) is migrated and keeps its positions.

import { execFileSync } from "node:child_process"
import { Effect, Fiber, Stream } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, type RecordedEvent } from "../src/index.ts"
import { ev, storeOf } from "./contract.ts"
import { bin, dropSchemas, server } from "./support/postgres.ts"

const { url, setupError } = server()
const run = `co${process.pid}_${Date.now().toString(36)}`
const schemas: Array<string> = []

const psql = (schema: string, query: string): string =>
  execFileSync(
    `${bin()}/psql`,
    [url, "-v", "ON_ERROR_STOP=1", "-tAq", "-c", `SET search_path TO ${schema}; ${query}`],
    {
      encoding: "utf8",
    },
  ).trim()

const freshSchema = (name: string): string => {
  if (setupError !== "") throw new Error(setupError)
  const schema = `pivot_${run}_${name}`
  schemas.push(schema)
  return schema
}

afterAll(() => {
  if (setupError === "") dropSchemas(url, schemas)
})

const layer = (schema: string, maxConnections = 10) =>
  EventStore.layerPostgres({ url, schema, pollInterval: "50 millis", maxConnections })

/** A stream's version before its `a`-th append (append `j` writes `j % 3 + 1` events). */
const versionBefore = (a: number): number => {
  let version = 0
  for (let j = 0; j < a; j++) version += (j % 3) + 1
  return version
}

/** Every event exactly once, positions strictly increasing, each stream's versions 1..n in position order. */
const expectCommitOrder = (seen: ReadonlyArray<RecordedEvent>, expectedIds: ReadonlyArray<string>) => {
  const ids = seen.map((e) => e.id)
  expect(new Set(ids).size).toBe(ids.length)
  expect([...ids].sort()).toEqual([...expectedIds].sort())
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.position).toBeGreaterThan(seen[i - 1]!.position)
  const versions = new Map<string, number>()
  for (const e of seen) {
    expect(e.streamVersion).toBe((versions.get(e.stream) ?? 0) + 1)
    versions.set(e.stream, e.streamVersion)
  }
}

describe("positions in commit order (PostgreSQL)", () => {
  it("given 6 stores × 8 fibers appending to different streams at once, then a subscriber sees every event once, in strictly increasing positions", async () => {
    const schema = freshSchema("parallel")
    const STORES = 6
    const FIBERS = 8
    const APPENDS = 15
    const expectedIds: Array<string> = []
    for (let s = 0; s < STORES; s++)
      for (let f = 0; f < FIBERS; f++)
        for (let a = 0; a < APPENDS; a++) for (let k = 0; k <= a % 3; k++) expectedIds.push(`e_${s}_${f}_${a}_${k}`)

    const { seen, acks, all } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          // The schema exists before the writers race to open it.
          const reader = yield* storeOf(layer(schema))
          const subscriber = yield* reader
            .subscribe()
            .pipe(Stream.take(expectedIds.length), Stream.runCollect, Effect.forkChild)
          const writers = yield* Effect.forEach(Array.from({ length: STORES }), () => storeOf(layer(schema)))
          const acks = yield* Effect.forEach(
            writers.flatMap((store, s) => Array.from({ length: FIBERS }, (_, f) => ({ store, s, f }))),
            ({ store, s, f }) =>
              Effect.forEach(Array.from({ length: APPENDS }), (_, a) =>
                store.append(
                  `stream-${s}-${f}`,
                  versionBefore(a),
                  Array.from({ length: (a % 3) + 1 }, (_, k) => ev(`e_${s}_${f}_${a}_${k}`)),
                ),
              ),
            { concurrency: "unbounded" },
          )
          const seen = yield* Fiber.join(subscriber).pipe(Effect.timeout("60 seconds"))
          const all = yield* Stream.runCollect(reader.readAll())
          return { seen, acks: acks.flat(), all }
        }),
      ),
    )
    expectCommitOrder(seen, expectedIds)
    expect(all.map((e) => e.position)).toEqual(seen.map((e) => e.position))
    // Every acknowledgement names the position its last event got.
    const byPosition = new Set(seen.map((e) => e.position))
    for (const ack of acks) expect(byPosition.has(ack.position)).toBe(true)
    expect(Number(psql(schema, "SELECT count(*) FROM pivot_events WHERE position IS NULL"))).toBe(0)
  }, 120_000)

  it("given rows committed without positions (a writer killed before numbering them), then the next read numbers them after every earlier position", async () => {
    const schema = freshSchema("crashed")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* storeOf(layer(schema))
          yield* store.append("a", "no-stream", [ev("a1"), ev("a2")])
        }),
      ),
    )
    // What a writer killed between its append transaction and its sequencing transaction leaves behind.
    psql(
      schema,
      `INSERT INTO pivot_events (event_id, stream, stream_version, type, schema_version, data, metadata, recorded_at)
       VALUES ('b1', 'b', 1, 'Tested', 1, '{"id":"b1"}', NULL, 0), ('b2', 'b', 2, 'Tested', 1, '{"id":"b2"}', NULL, 0),
              ('a3', 'a', 3, 'Tested', 1, '{"id":"a3"}', NULL, 0)`,
    )
    expect(psql(schema, "SELECT count(*) FROM pivot_events WHERE position IS NULL")).toBe("3")

    const { all, stream, subscribed } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* storeOf(layer(schema))
          const all = yield* Stream.runCollect(store.readAll())
          const stream = yield* store.read("a")
          const subscribed = yield* store.subscribe().pipe(Stream.take(5), Stream.runCollect)
          return { all, stream, subscribed }
        }),
      ),
    )
    expect(all.map((e) => e.id)).toEqual(["a1", "a2", "b1", "b2", "a3"])
    expect(all.map((e) => e.position)).toEqual([1, 2, 3, 4, 5])
    expect(stream.map((e) => [e.id, e.position])).toEqual([
      ["a1", 1],
      ["a2", 2],
      ["a3", 5],
    ])
    expect(subscribed.map((e) => e.id)).toEqual(all.map((e) => e.id))
    expect(psql(schema, "SELECT count(*) FROM pivot_events WHERE position IS NULL")).toBe("0")
  })

  it("given an unnumbered row, then read(stream) and the next append number it, and the append's own position comes after it", async () => {
    const schema = freshSchema("next")
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* storeOf(layer(schema))
          yield* store.append("a", "no-stream", [ev("a1")])
          psql(
            schema,
            `INSERT INTO pivot_events (event_id, stream, stream_version, type, schema_version, data, metadata, recorded_at)
             VALUES ('b1', 'b', 1, 'Tested', 1, '{"id":"b1"}', NULL, 0)`,
          )
          // The stream's version counts the unnumbered row: the version check sees every committed row.
          expect(yield* store.streamVersion("b")).toBe(1)
          const appended = yield* store.append("c", "no-stream", [ev("c1")])
          const b = yield* store.read("b")
          return { appended, b }
        }),
      ),
    )
    expect(result.b.map((e) => e.position)).toEqual([2])
    expect(result.appended).toEqual({ streamVersion: 1, position: 3 })
  })

  it("given a store written by the schema-2 pivot (identity positions), then it is migrated, keeps its positions and goes on after them", async () => {
    const schema = freshSchema("migrated")
    // The tables and migration rows exactly as migrations 1 and 2 made them, with a gap in the positions (a rolled
    // back append used a number).
    execFileSync(`${bin()}/psql`, [url, "-v", "ON_ERROR_STOP=1", "-q", "-c", `CREATE SCHEMA ${schema}`])
    psql(
      schema,
      `CREATE TABLE pivot_migrations (migration_id integer primary key, created_at timestamp with time zone not null default now(), name text not null);
       INSERT INTO pivot_migrations (migration_id, name) VALUES (1, 'create_events'), (2, 'create_keys');
       CREATE TABLE pivot_events (
         position BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, event_id TEXT NOT NULL, stream TEXT NOT NULL,
         stream_version INTEGER NOT NULL, type TEXT NOT NULL, schema_version INTEGER NOT NULL, data TEXT NOT NULL,
         metadata TEXT, recorded_at BIGINT NOT NULL,
         CONSTRAINT pivot_events_event_id_key UNIQUE (event_id),
         CONSTRAINT pivot_events_stream_version_key UNIQUE (stream, stream_version));
       CREATE TABLE pivot_keys (stream TEXT PRIMARY KEY, key_id TEXT NOT NULL, key TEXT NOT NULL, created_at BIGINT NOT NULL);
       INSERT INTO pivot_events (event_id, stream, stream_version, type, schema_version, data, recorded_at)
         VALUES ('o1', 'old', 1, 'Tested', 1, '{"id":"o1"}', 0), ('o2', 'old', 2, 'Tested', 1, '{"id":"o2"}', 0);
       SELECT nextval(pg_get_serial_sequence('pivot_events', 'position'));
       INSERT INTO pivot_events (event_id, stream, stream_version, type, schema_version, data, recorded_at)
         VALUES ('o3', 'other', 1, 'Tested', 1, '{"id":"o3"}', 0);`,
    )
    const all = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* storeOf(layer(schema))
          yield* store.append("old", 2, [ev("n1")])
          yield* store.append("new", "no-stream", [ev("n2")])
          return yield* Stream.runCollect(store.readAll())
        }),
      ),
    )
    expect(all.map((e) => [e.id, e.position])).toEqual([
      ["o1", 1],
      ["o2", 2],
      ["o3", 4],
      ["n1", 5],
      ["n2", 6],
    ])
    expect(psql(schema, "SELECT MAX(migration_id) FROM pivot_migrations")).toBe("4")
  })
})
