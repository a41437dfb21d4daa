// expect: runtime
// match: TypeError
const G = Object.getPrototypeOf(function* () {}).constructor;
return G("yield 1")().next();
