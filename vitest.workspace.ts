// The root Vitest config (Vitest 5 no longer picks up a workspace file by name): one project per package.
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "scripts", "examples"],
  },
})
