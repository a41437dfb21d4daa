// expect: runtime
// match: ReferenceError
return Function("return this")();
