// One bench:peers contender in a process of its own (forked by scripts/bench/peers.ts with an IPC channel): its own
// heap, JIT and collector, so that no other contender's garbage or code is collected or compiled inside its timed
// calls. Answers the bench's requests one at a time: start (load the session), warm, turn, finish (its GC report).
import { type Contender, gcWatch, make, runTurns, type Setup } from "./contenders.ts"

type Request =
  | { readonly id: number; readonly op: "start"; readonly setup: Setup }
  | { readonly id: number; readonly op: "warm"; readonly run: boolean }
  | { readonly id: number; readonly op: "turn"; readonly i: number; readonly events: ReadonlyArray<never> }
  | {
      readonly id: number
      readonly op: "turns"
      readonly from: number
      readonly n: number
      readonly events: ReadonlyArray<ReadonlyArray<never>>
    }
  | { readonly id: number; readonly op: "finish" }

const watch = gcWatch()
let contender: Contender | undefined

const answer = async (request: Request): Promise<unknown> => {
  switch (request.op) {
    case "start":
      contender = make(request.setup, watch)
      return contender.load()
    case "warm":
      await contender!.warm(request.run)
      watch.reset()
      return undefined
    case "turn":
      return contender!.turn(request.i, request.events)
    case "turns":
      return runTurns(contender!, request.from, request.n, request.events)
    case "finish": {
      await contender!.close()
      const report = watch.report()
      watch.stop()
      return report
    }
  }
}

process.on("message", (request: Request) => {
  answer(request).then(
    (value) => process.send!({ id: request.id, value }, () => request.op === "finish" && process.disconnect()),
    (error: unknown) => process.send!({ id: request.id, error: error instanceof Error ? error.stack : String(error) }),
  )
})
