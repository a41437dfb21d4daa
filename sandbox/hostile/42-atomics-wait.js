// expect: runtime
// match: ReferenceError
return Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
