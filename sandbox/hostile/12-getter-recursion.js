// expect: limit:recursion
const o = { get x() { return this.x; } };
return o.x;
