// Preloaded into bench:restart's child (`--compile-cache`, issue 32, ADR 0049): what an embedder's entry can do before
// it loads pivot. PIVOT_BENCH_EAGER=1 turns V8's lazy compilation off in this process (every function compiled when its
// module loads, not on its first call); PIVOT_BENCH_CACHE=DIR keeps the compiled code in Node's compile cache in DIR.
// Together, a later process reads the restart's functions compiled instead of compiling them inside its first call.
import * as module from "node:module"
import * as v8 from "node:v8"

if (process.env.PIVOT_BENCH_EAGER === "1") v8.setFlagsFromString("--no-lazy")
if (process.env.PIVOT_BENCH_CACHE) module.enableCompileCache(process.env.PIVOT_BENCH_CACHE)
