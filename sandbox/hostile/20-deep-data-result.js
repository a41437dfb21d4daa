// expect: limit:stack|deadline|result_size
// Nested data built in a loop, then returned: JSON.stringify recursion on the native stack.
let a = [];
for (let i = 0; i < 2000000; i++) a = [a];
return a;
