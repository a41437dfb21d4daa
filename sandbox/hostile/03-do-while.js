// expect: limit:loop_iterations
do { } while (true);
