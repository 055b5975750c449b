/**
 * How many cases each property tries: 1000 in the suite; fewer when `PIVOT_PROPERTY_RUNS` says so (the mutation run
 * sets 50, since it repeats every covering property for each mutant it covers).
 */
export const RUNS = { numRuns: Number(process.env.PIVOT_PROPERTY_RUNS) || 1000 }
