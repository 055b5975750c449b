// The Node flags `pivot import` runs with: bin.mjs starts the import in a child Node with them, and
// scripts/bench/import.ts measures the import under the same. A big import's data is long-lived and its garbage comes
// in bursts, so V8's defaults let the heap run far past the live data (~440 MB peak for a 39 MB export). A small young
// generation (4 MB semi-spaces) keeps short-lived garbage out of the old generation, and a smaller heap growing factor
// (1.6 instead of V8's adaptive 1.1–4) collects the old generation before it doubles: ~250 MB peak on every run
// instead of ~265 or ~340 MB by chance, for ~0.2–0.3 s more CPU (docs/benchmarks.md).
export const IMPORT_NODE_FLAGS = ["--max-semi-space-size=4", "--heap-growing-percent=60"]
