// The root Vitest config (Vitest 5 no longer picks up a workspace file by name): one project per package, and how many
// files run at once in the current lane (scripts/vitest.shared.ts).
import { defineConfig } from "vitest/config"
import { maxWorkers } from "./scripts/vitest.shared.ts"

export default defineConfig({
  test: {
    projects: ["packages/*", "scripts", "examples"],
    maxWorkers,
  },
})
