// expect: limit:loop_iterations
// line: 3
while (true) {}
