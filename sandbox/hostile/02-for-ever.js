// expect: limit:loop_iterations
for (;;) {}
