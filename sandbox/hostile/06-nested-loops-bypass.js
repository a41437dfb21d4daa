// expect: limit:deadline|loop_iterations
// Boa counts loop iterations per frame; nested loops can stay under the count: the deadline ends it.
// line: 4
for (let i = 0; i < 1e9; i++) { for (let j = 0; j < 9e6; j++) {} }
