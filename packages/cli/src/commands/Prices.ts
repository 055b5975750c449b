/**
 * The `--prices FILE` flag of the commands that bill a ledger (`inspect`, `serve`): the one place that reads and
 * checks a price table, so both commands accept and refuse the same files with the same messages.
 */
import type { Pricing } from "@pivot/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CliError, describe } from "./Command.ts"
import { readBytes } from "./Source.ts"

/** The `--prices` file: `{ "provider/model": { input, output, cacheRead, cacheWrite } }`, USD per million tokens. */
export const readPrices = (file: string) =>
  Effect.gen(function* () {
    const bytes = yield* readBytes(file)
    const text = new TextDecoder().decode(bytes)
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => new CliError({ message: `${file} is not JSON` }),
    })
    // Loaded on use: the runtime's modules are not needed by commands that price nothing.
    const { Config } = yield* Effect.promise(() => import("@pivot/runtime"))
    return yield* Schema.decodeUnknownEffect(Config.PriceTable)(parsed).pipe(
      Effect.mapError(
        (error) =>
          new CliError({
            message: `${file}: expected { "provider/model": { input, output, cacheRead, cacheWrite } } (USD per million tokens): ${describe(error)}`,
          }),
      ),
    )
  })

/** The flag's table (empty when not given: the model catalog's prices only). */
export const pricesOf = (
  flag: Option.Option<string>,
): Effect.Effect<Readonly<Record<string, Pricing.Price>>, CliError> =>
  Option.isSome(flag) ? readPrices(flag.value) : Effect.succeed({})
