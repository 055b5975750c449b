// The Node flags `pivot import` runs with: bin.mjs starts the import in a child Node with them, and
// scripts/bench/import.ts measures the import under the same. A small young generation (4 MB semi-spaces) keeps the
// peak memory of a big import near its live data (~270 MB instead of ~440 MB for a 39 MB export) at no measurable
// cost in time: the decoded export is long-lived, so a larger young generation only copies it later.
export const IMPORT_NODE_FLAGS = ["--max-semi-space-size=4"]
