/**
 * How many cases each property tries: 1000 in the suite; fewer when `PIVOT_PROPERTY_RUNS` says so (the mutation run
 * sets 100, since it repeats every covering property for each of ~1,300 mutants).
 */
export const RUNS = { numRuns: Number(process.env.PIVOT_PROPERTY_RUNS) || 1000 }
