// expect: runtime
// match: ReferenceError
return eval("1 + 1");
