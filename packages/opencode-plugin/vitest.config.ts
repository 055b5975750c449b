import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  test: {
    name: "opencode-plugin",
    testTimeout: 60_000,
    ...testFiles,
    // The PostgreSQL test server: started for the slow lane only, stopped when the run ends.
    globalSetup: ["../store/test/globalSetup.ts"],
  },
})
