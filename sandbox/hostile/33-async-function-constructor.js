// expect: runtime
// match: TypeError
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
return await new AsyncFunction("return 1")();
