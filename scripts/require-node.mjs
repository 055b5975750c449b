// Runs before every npm script: pivot needs the Node that the root package.json's engines names (>= 22.16: the SQLite
// store uses node:sqlite with busy timeouts), the one minimum every package, the README and `pivot` state. The project
// installs Node 24 as a devDependency. Plain JavaScript that an old Node can parse.
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** The minimum Node version, from the root package.json's engines (">=22.16.0" → "22.16.0"). */
export const minimum = JSON.parse(
  readFileSync(new URL("../package.json", import.meta.url), "utf8"),
).engines.node.replace(/^>=\s*/, "")

const parts = (version) => version.replace(/^v/, "").split(".").map(Number)

/** Whether `version` is older than `least` (both "major.minor.patch"). */
export const tooOld = (version, least = minimum) => {
  const [a, b] = [parts(version), parts(least)]
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0)
  return false
}

/** What a too-old Node is told. */
export const message = (version) =>
  `pivot needs Node >= ${minimum.replace(/\.0$/, "")}, but this script runs on Node ${version}.\n` +
  "Run it through npm (npm start, npm test), which puts the project's own Node 24 from node_modules/.bin first on PATH,\n" +
  "or run `npm install` first if node_modules is missing."

if (process.argv[1] === fileURLToPath(import.meta.url) && tooOld(process.versions.node)) {
  console.error(message(process.versions.node))
  process.exit(1)
}
