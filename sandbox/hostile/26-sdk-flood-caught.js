// expect: limit:sdk_calls
// Catching the limit error does not hide it.
for (let i = 0; i < 500; i++) { try { await sdk.test.echo({ i }); } catch (e) {} }
return "done";
