// expect: runtime
// match: SyntaxError
return JSON.parse("[".repeat(100000) + "]".repeat(100000));
