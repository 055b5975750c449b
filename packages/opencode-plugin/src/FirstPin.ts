/**
 * The default pin of an OpenCode session's first user message (option `pinFirstMessage`, on by default under drive
 * mode): made right after the recorder records that message, as `ContextPinned` by `default`, within the pin budget of
 * the session's model (a first message larger than the budget is not pinned: the Decider decides nothing then). The
 * pin brings the message back, verbatim, after every compaction OpenCode runs (`Restore`, under drive).
 */
import { Ids } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/** Whether the first message is pinned by default: the option when given, else on exactly when drive mode is. */
export const enabled = (options: {
  readonly pinFirstMessage?: boolean | undefined
  readonly drive?: boolean | undefined
}) => options.pinFirstMessage ?? options.drive ?? false

/** Pins `messageId`, the session's first user message, by default. */
export const pin = (
  sessionId: string,
  messageId: string,
): Effect.Effect<void, unknown, ContextManager | Sessions.Sessions> =>
  Effect.gen(function* () {
    const { budget } = yield* (yield* ContextManager).pins(sessionId)
    const at = yield* Clock.currentTimeMillis
    yield* (yield* Sessions.Sessions).execute(sessionId, {
      _tag: "Pin",
      at,
      messageId: Ids.unsafe.message(messageId),
      by: "default",
      budget,
    })
  })
