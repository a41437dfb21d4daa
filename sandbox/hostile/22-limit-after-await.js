// expect: limit:loop_iterations
// line: 6
// A limit hit after an await ends the run with that limit, at the line of the loop (Boa used
// to swallow it and leave the promise pending: vendor/boa_engine/PATCHES.md, 3).
await sdk.test.echo({});
while (true) {}
