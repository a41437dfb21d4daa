// expect: runtime
// match: never settled
// Boa swallows limit errors after an await; the promise stays pending and we report it.
await sdk.test.echo({});
while (true) {}
