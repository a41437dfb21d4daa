// expect: limit:loop_iterations|deadline
function* g() { while (true) yield 1; }
for (const x of g()) { }
