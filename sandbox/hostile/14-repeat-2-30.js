// expect: limit:loop_iterations|memory
return "x".repeat(2 ** 30).length;
