import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "opencode", include: ["test/**/*.test.ts"] },
})
