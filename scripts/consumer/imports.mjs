// The consumer check's plain-JavaScript import: each installed package loads on this Node and exports what it names.
const expected = {
  "@pivot/core": ["Session", "Window", "Events", "Tokens", "Ids"],
  "@pivot/store": ["EventStore", "SqliteClient", "ReadModels"],
  "@pivot/runtime": ["ContextManager", "Sessions", "Config"],
  "@pivot/ai": ["AiAgent", "AiSummarizer", "Messages", "createPivot"],
  "@pivot/server": ["Serve"],
  "@pivot/opencode": ["Import", "Export"],
  "@pivot/opencode-plugin": ["default"],
  "@pivot/cli": ["run", "main", "version"],
}
let failed = 0
for (const [name, keys] of Object.entries(expected)) {
  try {
    const module = await import(name)
    const missing = keys.filter((key) => module[key] === undefined)
    if (missing.length > 0) throw new Error(`missing exports: ${missing.join(", ")}`)
    console.log(`import ok ${name}`)
  } catch (error) {
    failed++
    console.log(`import FAILED ${name}: ${String(error?.message ?? error).split("\n")[0]}`)
  }
}
process.exitCode = failed === 0 ? 0 : 1
