// expect: runtime
// match: never settled
await new Promise(() => {});
