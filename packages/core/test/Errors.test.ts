/** Every refusal explains itself in one line naming what it is about (issue 12: MessageConflict had no message). */
import { Errors } from "@pivot/core"
import { describe, expect, it } from "vitest"

const refusals = [
  [new Errors.SessionNotStarted({}), /not started/],
  [new Errors.SessionAlreadyStarted({ sessionId: "ses_a" }), /ses_a/],
  [new Errors.MessageConflict({ messageId: "msg_1" }), /msg_1 was already recorded with different content/],
  [new Errors.UnknownMessage({ messageId: "msg_2" }), /no message msg_2/],
  [new Errors.UnknownMessage({ messageId: "msg_3", expected: "parent" }), /no parent message msg_3/],
  [new Errors.UnknownPart({ messageId: "msg_4", partId: "prt_5" }), /msg_4 has no tool part prt_5/],
  [new Errors.UnknownCompaction({ markerId: "msg_6" }), /no compaction msg_6/],
  [
    new Errors.CompactionOutOfOrder({ markerId: "msg_7", status: "finished", command: "StartCompaction" }),
    /cannot StartCompaction compaction msg_7: it is finished/,
  ],
] as const

describe("domain errors", () => {
  it.each(refusals)("%s has a one-line message saying what went wrong", (error, pattern) => {
    expect(error.message).toMatch(pattern)
    expect(error.message).not.toContain("\n")
    expect(String(error)).toContain(error.message)
  })
})
