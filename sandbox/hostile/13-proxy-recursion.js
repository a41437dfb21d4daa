// expect: limit:recursion
const p = new Proxy({}, { get: (t, k, r) => r[k] });
return p.anything;
