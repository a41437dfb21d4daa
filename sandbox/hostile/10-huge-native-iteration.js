// expect: limit:deadline|memory
// Native builtins are not interruptible by loop limits.
return new Array(1e9).fill(0).length;
