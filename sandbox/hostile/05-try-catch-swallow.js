// expect: limit:loop_iterations
// Limit errors cannot be caught by the code.
try { while (true) {} } catch (e) { return "caught"; }
