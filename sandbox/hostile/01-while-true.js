// expect: limit:loop_iterations
while (true) {}
