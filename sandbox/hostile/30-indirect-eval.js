// expect: runtime
// match: ReferenceError
return (0, globalThis["ev" + "al"])("1");
