// expect: limit:loop_iterations|deadline
[1, 2, 3].map(() => { for (;;) {} });
