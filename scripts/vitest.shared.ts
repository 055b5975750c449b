// What every Vitest project shares: tests import the packages' TypeScript sources through the "@pivot/source" export
// condition (the same no-build loop as tsconfig's customConditions and `node --conditions=@pivot/source`), never dist/;
// and the two lanes (docs/testing.md): `*.slow.test.ts` files (PostgreSQL, Chromium, real processes killed, the
// OpenCode binary) run in `npm run test:all` only, `npm test` (PIVOT_TEST_LANE=fast) leaves them out.

import { fileURLToPath } from "node:url"
import { defaultServerConditions } from "vite"
import { configDefaults } from "vitest/config"

/** Vite resolve options that pick each package's `@pivot/source` export before its compiled one. */
export const sourceResolve = {
  resolve: { conditions: ["@pivot/source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["@pivot/source", ...defaultServerConditions] } },
}

/** The slow lane's files, by name: the convention every package follows. */
export const SLOW_TESTS = "**/*.slow.test.ts"

/** `fast` (what `npm test` sets) leaves the slow lane out; anything else, or unset, runs every test file. */
export const lane: "fast" | "all" = process.env.PIVOT_TEST_LANE === "fast" ? "fast" : "all"

/** A project's test files in the current lane, and the setup every project loads (the property seed). */
export const testFiles = {
  include: ["test/**/*.test.ts"],
  exclude: lane === "fast" ? [...configDefaults.exclude, SLOW_TESTS] : [...configDefaults.exclude],
  // The fast lane does not isolate test files: no module of the packages holds state a test changes (the one
  // module-level variable in src is the SQLite driver's opener, the same for the whole process; no test mocks or fakes
  // timers), so each worker evaluates them once instead of once per file, which was 44% of core's time. The full run
  // (`test:all`, CI) keeps every file isolated, as before (docs/testing.md, "The fast lane's time").
  isolate: lane === "all",
  // fast-check's seed from `PIVOT_PROPERTY_SEED` (scripts/fastcheck.setup.ts).
  setupFiles: [fileURLToPath(new URL("./fastcheck.setup.ts", import.meta.url))],
}
