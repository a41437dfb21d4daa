// expect: runtime
// match: TypeError
const AG = Object.getPrototypeOf(async function* () {}).constructor;
return AG("yield 1");
