#!/usr/bin/env node
// The installed `pivot` command. Plain JavaScript that any Node can parse, so an old Node gets a clear message
// instead of a syntax or file-extension error; then it loads the TypeScript entry, which Node runs natively.
const [major] = process.versions.node.split(".").map(Number)
if (major < 22 || !process.features.typescript) {
  console.error(
    `pivot needs Node >= 22.18 (it runs its TypeScript sources directly), but this is Node ${process.versions.node}.\n` +
      "From a checkout, use the project's own Node 24: `npm start`, or `npx node packages/cli/src/bin.ts <command>`\n" +
      "(run `npm install` first if node_modules is missing).",
  )
  process.exit(1)
}
await import("./bin.ts")
