// Every Vitest project loads this before its test files: `FC_SEED=<n>` (and `FC_NUM_RUNS=<n>`) set fast-check's
// global parameters, so a property's failure can be replayed from the seed it printed, and the suites can be run under
// other seeds to find seed-dependent failures. Properties that pass their own `seed` keep it (they are pinned).
import fc from "fast-check"

const number = (name: string): number | undefined => {
  const text = process.env[name]
  if (text === undefined || text.trim() === "") return undefined
  const value = Number(text)
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got ${JSON.stringify(text)}`)
  return value
}

const seed = number("FC_SEED")
const numRuns = number("FC_NUM_RUNS")
if (seed !== undefined || numRuns !== undefined)
  fc.configureGlobal({
    ...fc.readConfigureGlobal(),
    ...(seed === undefined ? {} : { seed }),
    ...(numRuns === undefined ? {} : { numRuns }),
  })
