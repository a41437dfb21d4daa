// expect: runtime
// match: TypeError
return (0, globalThis["ev" + "al"])("1");
