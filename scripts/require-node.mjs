// Runs before every npm script: pivot needs Node >= 22 (the project installs Node 24 as a devDependency).
const [major] = process.versions.node.split(".").map(Number)
if (major < 22) {
  console.error(
    `pivot needs Node >= 22, but this script runs on Node ${process.versions.node}.\n` +
      "Run it through npm (npm start, npm test), which puts the project's own Node 24 from node_modules/.bin first on PATH,\n" +
      "or run `npm install` first if node_modules is missing.",
  )
  process.exit(1)
}
