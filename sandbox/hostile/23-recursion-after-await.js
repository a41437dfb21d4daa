// expect: runtime
// match: never settled
await null;
function f() { return f(); }
f();
