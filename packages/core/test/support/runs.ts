/**
 * How many cases a property tries. The full run (`npm run test:all`, what CI runs) tries every property's full count;
 * the fast lane (`npm test`, which sets `PIVOT_TEST_LANE=fast`) a tenth of it, rounded up, so a change is checked in
 * minutes while CI keeps the whole search (docs/testing.md, "Two lanes").
 *
 * `runs(full)` is that rule for a property with its own count; `RUNS` is the default 1000, which
 * `PIVOT_PROPERTY_RUNS` overrides in either lane (the mutation run sets 50, since it repeats every covering property
 * for each mutant it covers).
 */
export const lanedRuns = (full: number, lane: string | undefined): number =>
  lane === "fast" ? Math.ceil(full / 10) : full

/** `{ numRuns }` for a property whose full run tries `full` cases, in the current lane. */
export const runs = (full: number) => ({ numRuns: lanedRuns(full, process.env.PIVOT_TEST_LANE) })

/** The default: 1000 cases in the full run, 100 in the fast lane, or `PIVOT_PROPERTY_RUNS` when set. */
export const RUNS = { numRuns: Number(process.env.PIVOT_PROPERTY_RUNS) || runs(1000).numRuns }
