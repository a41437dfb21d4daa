// expect: ok
// result: [null,null,null,null]
const get = (f) => Object.getOwnPropertyDescriptor(Object.getPrototypeOf(f), "constructor").value ?? null;
return [get(() => {}), get(async () => {}), get(function* () {}), get(async function* () {})];
