/**
 * Running a compaction's probes (optional; `ContextManager` option `probes` with a `Judge` in context): after a
 * pivot forms, the questions derived from its recorded retention check are put to the judge with the summary as
 * stored, the answers graded (`Probe`), and the result recorded as `ProbesAnswered` — the answers, or why there are
 * none (the judge failed or ran out of time). A judge never fails the operation that formed the pivot.
 */
import { Model, Probe, Tokens } from "@pivot/core"
import { Cause, Duration, Effect, Exit, Option, Schema } from "effect"
import type { Outcome } from "./Compaction.ts"
import { timeBox } from "./internal/timeBox.ts"
import { JudgeError, type JudgeShape } from "./Judge.ts"
import type * as RuntimeEvents from "./RuntimeEvents.ts"
import type { ExecuteError, SessionsShape } from "./Sessions.ts"

/** Options of the probes. */
export interface Options {
  /** Time limit of the judge's call; default 1 minute. */
  readonly timeout?: Duration.Input | undefined
  /** The judge's output cap; default 1,000 tokens. */
  readonly maxOutputTokens?: number | undefined
}

/** The default time limit of the judge's call. */
export const DEFAULT_TIMEOUT: Duration.Input = "1 minute"
/** The default output cap of the judge. */
export const DEFAULT_MAX_OUTPUT = 1_000
/** How far back from the head the pivot's retention check is looked for (it is recorded in the pivot's batch). */
const LOOK_BACK = 64

// A judge is the user's code: what it answers is checked before it is recorded (a bad usage would fail the append).
const validUsage = Schema.is(Tokens.TokenUsage)
const validModel = Schema.is(Model.ModelRef)

const describe = (error: unknown): string =>
  error instanceof JudgeError ? error.message : error instanceof Error ? error.message : String(error)

/** Probes the pivot a settled compaction formed, once; nothing for a failed one or a span without artifacts. */
export const make =
  (sessions: SessionsShape, judge: JudgeShape, options: Options = {}) =>
  (sessionId: string, outcome: Outcome | undefined): Effect.Effect<void, ExecuteError> =>
    Effect.gen(function* () {
      if (outcome?.status !== "finished") return
      const head = (yield* sessions.load(sessionId)).session.version
      const recent = yield* sessions.events(sessionId, { from: Math.max(1, head - LOOK_BACK) })
      const mine = (e: { readonly _tag: string; readonly markerId?: string }) => e.markerId === outcome.markerId
      if (recent.some((e) => e._tag === "ProbesAnswered" && mine(e))) return
      const checked = recent.findLast((e) => e._tag === "ArtifactsChecked" && mine(e))
      if (checked?._tag !== "ArtifactsChecked") return
      const asked = Probe.questions(checked.artifacts)
      if (asked.length === 0) return
      const timeout = Duration.fromInputUnsafe(options.timeout ?? DEFAULT_TIMEOUT)
      const exit = yield* Effect.exit(
        timeBox(
          judge.answer({
            sessionId,
            markerId: outcome.markerId,
            system: Probe.SYSTEM,
            prompt: Probe.prompt(outcome.text, asked),
            maxOutputTokens: options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT,
          }),
          timeout,
        ),
      )
      // Being interrupted is not the judge's failure: nothing is recorded.
      if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
      const answered = Exit.isSuccess(exit)
        ? Option.isNone(exit.value)
          ? ({ ok: false, error: `the judge took longer than ${Duration.format(timeout)}` } as const)
          : !validUsage(exit.value.value.usage) || !validModel(exit.value.value.model)
            ? ({ ok: false, error: "the judge answered with a usage or model that is not valid" } as const)
            : ({ ok: true, response: exit.value.value } as const)
        : ({
            ok: false,
            error: describe(Option.getOrElse(Cause.findErrorOption(exit.cause), () => Cause.squash(exit.cause))),
          } as const)
      const at = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      const event: RuntimeEvents.Event = answered.ok
        ? {
            _tag: "ProbesAnswered",
            at,
            markerId: outcome.markerId,
            model: answered.response.model,
            usage: answered.response.usage,
            probes: Probe.grade(asked, Probe.parseAnswers(answered.response.text, asked.length)),
          }
        : { _tag: "ProbesAnswered", at, markerId: outcome.markerId, probes: [], error: answered.error }
      yield* sessions.execute(sessionId, { _tag: "Record", events: [event] })
    })
