package capsule

// ReplayCode is the code-execution step of Replay, for tests that give it a
// study without packing one.
var ReplayCode = replayCode
