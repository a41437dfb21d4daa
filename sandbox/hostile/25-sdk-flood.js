// expect: limit:sdk_calls
await Promise.all(Array.from({ length: 500 }, () => sdk.test.echo({})));
