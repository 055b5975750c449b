import { configDefaults, defineProject } from "vitest/config"
import { sourceResolve } from "../../scripts/vitest.shared.ts"

// `*.slow.test.ts` (the real OpenCode binary) is the slow lane: left out when PIVOT_TEST_LANE=fast.
const slow = process.env.PIVOT_TEST_LANE === "fast" ? ["**/*.slow.test.ts"] : []

export default defineProject({
  ...sourceResolve,
  test: {
    name: "opencode-plugin",
    testTimeout: 60_000,
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...slow],
  },
})
