// expect: limit:memory
// Typed arrays grow past the worker memory cap: a clean memory error, not a crash of anything else.
const a = [];
for (let i = 0; i < 160; i++) a.push(new Float64Array(1e6));
return a.length;
