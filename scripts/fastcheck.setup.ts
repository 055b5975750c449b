// Every Vitest project loads this before its test files: `PIVOT_PROPERTY_SEED=<n>` sets fast-check's global seed, so
// a property's failure can be replayed from the seed it printed, and the suites can be run under other seeds to find
// seed-dependent failures. A property that passes its own `seed` keeps it (it is pinned). How many cases a property
// tries is `PIVOT_PROPERTY_RUNS` (packages/core/test/support/runs.ts).
import fc from "fast-check"

const text = process.env.PIVOT_PROPERTY_SEED
if (text !== undefined && text.trim() !== "") {
  const seed = Number(text)
  if (!Number.isSafeInteger(seed))
    throw new Error(`PIVOT_PROPERTY_SEED must be an integer, got ${JSON.stringify(text)}`)
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed })
}
