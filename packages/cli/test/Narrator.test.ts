/** The demo's commentary: the replay commands it prints. */
import { describe, expect, it } from "vitest"
import { inspectCommand, shellWord, windowCommand } from "../src/demo/Narrator.ts"

describe("the replay commands", () => {
  it("given a plain path, then it is printed as is", () => {
    expect(windowCommand(".pivot/demo.db", "ses_abc", 42)).toBe(
      "npx pivot window --db .pivot/demo.db --session ses_abc --at 42",
    )
    expect(inspectCommand(".pivot/demo.db", "ses_abc")).toBe("npx pivot inspect --db .pivot/demo.db --session ses_abc")
  })

  it("given a path with spaces or quotes, then it is quoted for the shell", () => {
    expect(shellWord("/tmp/my demo.db")).toBe("'/tmp/my demo.db'")
    expect(shellWord("/tmp/it's.db")).toBe("'/tmp/it'\\''s.db'")
  })
})
