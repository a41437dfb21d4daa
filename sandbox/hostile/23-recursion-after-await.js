// expect: limit:recursion
// line: 4
await null;
function f() { return f(); }
f();
