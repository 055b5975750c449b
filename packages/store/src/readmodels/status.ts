/**
 * The built-in read models' status, in the shape of a projection's (`Projections.Status`), so that `pivot projections
 * status`, the JSON API and the viewer show them beside users' projections: the sessions each holds at its current
 * version (`keys`) and the events not yet folded into it (`lag`: events appended by a store without the hook, sessions
 * not read since a version bump or a `forget`). A built-in is always `ready`: a read first catches its session up.
 */
import * as Effect from "effect/Effect"
import type { SqlError } from "effect/sql"
import type * as Projections from "../projections/Projections.ts"
import * as SessionLog from "../session/SessionLog.ts"
import { models } from "./builtIns.ts"
import type { Sql } from "./ReadModel.ts"
import { hasReadModels } from "./tables.ts"

type Num = number | string | bigint

/** Each built-in read model's status, in the order they are written. */
export const status = (sql: Sql): Effect.Effect<ReadonlyArray<Projections.Status>, SqlError.SqlError> =>
  Effect.gen(function* () {
    const streams = yield* sql<{
      readonly stream: string
      readonly head: Num
    }>`SELECT stream, MAX(stream_version) AS head FROM pivot_events WHERE stream LIKE 'session-%' GROUP BY stream`
    const position = yield* sql<{ readonly head: Num | null }>`SELECT MAX(position) AS head FROM pivot_events`
    const head = Number(position[0]?.head ?? 0)
    // A database only the runtime wrote, opened read-only, has no read-model tables: nothing is folded yet.
    const checkpoints = (yield* hasReadModels(sql))
      ? yield* sql<{
          readonly model: string
          readonly session_id: string
          readonly projection_version: Num
          readonly stream_version: Num
        }>`SELECT model, session_id, projection_version, stream_version FROM pivot_rm_checkpoints`
      : []
    return models.map(({ projection: { name, version } }): Projections.Status => {
      const covered = new Map<string, number>()
      for (const cp of checkpoints)
        if (cp.model === name && Number(cp.projection_version) === version)
          covered.set(cp.session_id, Number(cp.stream_version))
      let lag = 0
      for (const { stream, head: last } of streams) {
        const sessionId = SessionLog.sessionIdOf(stream)
        lag += Math.max(0, Number(last) - (sessionId === undefined ? 0 : (covered.get(sessionId) ?? 0)))
      }
      return {
        name,
        version,
        mode: "inline",
        scope: "session",
        ready: true,
        checkpoint: Math.max(0, head - lag),
        head,
        lag,
        failures: 0,
        error: undefined,
        owner: undefined,
        leaseUntil: undefined,
        keys: covered.size,
      }
    })
  })
