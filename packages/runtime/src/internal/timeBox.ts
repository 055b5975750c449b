// The time box around code pivot does not control (summarisers, plugin hooks). `Effect.timeout` interrupts the loser
// and then waits for it to finish, so a hook that hangs uninterruptibly (`Effect.uninterruptible(Effect.never)`, a
// finaliser that never returns) would hold the caller forever. Here the hook runs in a detached fiber: on timeout, or
// when the caller is interrupted, that fiber is told to stop in the background and nobody waits for it.
import { type Duration, Effect, Fiber, type Option } from "effect"

/** Runs `effect` for at most `limit`: `Some` of its value, `None` when the time ran out (the fiber is abandoned). */
export const timeBox = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  limit: Duration.Input,
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkDetach(effect)
      const abandon = Effect.asVoid(Effect.forkDetach(Fiber.interrupt(fiber)))
      return yield* restore(Effect.timeoutOption(Fiber.join(fiber), limit)).pipe(
        Effect.onInterrupt(() => abandon),
        Effect.tap((joined) => (joined._tag === "None" ? abandon : Effect.void)),
      )
    }),
  )
