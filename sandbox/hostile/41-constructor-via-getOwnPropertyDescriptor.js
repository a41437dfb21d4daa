// expect: ok
// result: [null,null,null]
const d = Object.getOwnPropertyDescriptor(Function.prototype, "constructor");
const a = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(async () => {}), "constructor");
const g = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(function* () {}), "constructor");
return [d.value ?? null, a.value ?? null, g.value ?? null];
