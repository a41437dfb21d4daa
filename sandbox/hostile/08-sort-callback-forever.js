// expect: limit:loop_iterations|deadline
[3, 2, 1].sort(() => { while (true) {} });
