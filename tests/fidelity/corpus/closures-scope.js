// Closures and scope: TDZ ReferenceErrors, let vs var in loops, hoisting of var and function
// declarations, block-scoped functions, closures over mutable state, shadowing.

// @case tdz-let-access-throws
const before = () => value;
const r = before();
let value = 1;
return r;

// @case tdz-in-own-initializer-throws
let x = x + 1;
return x;

// @case tdz-class-before-declaration-throws
const p = new Panel();
class Panel {}
return p;

// @case closures-in-loops-let-vs-var
const withVar = [], withLet = [];
for (var i = 0; i < 3; i++) withVar.push(() => i);
for (let j = 0; j < 3; j++) withLet.push(() => j);
return { var: withVar.map((f) => f()), let: withLet.map((f) => f()) };

// @case let-loop-copy-semantics-with-mutation
const fns = [];
for (let i = 0; i < 3; i++) { fns.push(() => i); i++; }
return fns.map((f) => f());

// @case var-hoisting-and-function-hoisting
const a = typeof hoistedVar;
const b = hoistedFn();
var hoistedVar = 'set';
function hoistedFn() { return 'fn works before declaration'; }
return { a, b, after: hoistedVar };

// @case function-expression-not-hoisted-throws
const r = notYet();
var notYet = function () { return 1; };
return r;

// @case counter-factory-private-state
const makeCounter = (start = 0) => { let n = start; return { inc: () => ++n, dec: () => --n, get value() { return n; } }; };
const a = makeCounter(), b = makeCounter(10);
a.inc(); a.inc(); b.dec();
return [a.value, b.value];

// @case shadowing-and-block-scope
let x = 'outer';
const log = [];
{
  let x = 'block';
  log.push(x);
  { const x = 'inner'; log.push(x); }
}
log.push(x);
if (true) { var leaked = 'var leaks'; let kept = 'let stays'; }
return { log, leaked, keptType: typeof kept };

// @case memoize-closure-cache
const calls = [];
const memo = (fn) => { const cache = new Map(); return (n) => { if (!cache.has(n)) { calls.push(n); cache.set(n, fn(n)); } return cache.get(n); }; };
const fib = memo((n) => (n < 2 ? n : fib(n - 1) + fib(n - 2)));
return { f30: fib(30), f50: fib(50), computed: calls.length };
