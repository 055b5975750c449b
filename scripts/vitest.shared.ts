// What every Vitest project shares: tests import the packages' TypeScript sources through the "@pivot/source" export
// condition (the same no-build loop as tsconfig's customConditions and `node --conditions=@pivot/source`), never dist/.
import { fileURLToPath } from "node:url"
import { defaultServerConditions } from "vite"

/** Vite resolve options that pick each package's `@pivot/source` export before its compiled one. */
export const sourceResolve = {
  resolve: { conditions: ["@pivot/source", ...defaultServerConditions] },
  ssr: { resolve: { conditions: ["@pivot/source", ...defaultServerConditions] } },
}

/** Setup files every project loads: fast-check's seed from `PIVOT_PROPERTY_SEED`. */
export const setupFiles = [fileURLToPath(new URL("./fastcheck.setup.ts", import.meta.url))]
