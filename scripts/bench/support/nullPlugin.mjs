// An OpenCode plugin that does nothing, the control of `bench:opencode --startup --before` (what loading any plugin
// costs OpenCode). The bench's import probe calls `context_compact` and `dispose`, so both exist; the tool is not
// enumerable, so OpenCode registers no tool and its requests stay those of OpenCode alone.
export default async function NullPlugin() {
  const tool = {}
  Object.defineProperty(tool, "context_compact", { enumerable: false, value: { execute: async () => "" } })
  return { tool, dispose: async () => {} }
}
