// Hardening prelude: runs in every fresh realm after the host globals are defined and before
// model code. It must leave nothing behind in the global scope.
(function (g) {
  'use strict';
  // No code from strings: remove eval/Function and every path to a function constructor
  // (`(() => {}).constructor`, async, generator and async generator functions).
  const kill = (proto) =>
    Object.defineProperty(proto, 'constructor', {
      value: undefined, writable: false, enumerable: false, configurable: false,
    });
  kill(Function.prototype);
  kill(Object.getPrototypeOf(async function () {}));
  kill(Object.getPrototypeOf(function* () {}));
  kill(Object.getPrototypeOf(async function* () {}));
  for (const k of ['eval', 'Function', 'SharedArrayBuffer', 'Atomics', 'WeakRef',
                   'FinalizationRegistry']) {
    delete g[k];
  }
  // Host globals are read-only bindings already; freeze them all the way down.
  const freeze = (o) => {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || Object.isFrozen(o)) {
      return;
    }
    Object.freeze(o);
    for (const k of Object.getOwnPropertyNames(o)) freeze(o[k]);
  };
  for (const k of ['sdk', 'utils', 'spec', 'console']) {
    if (Object.prototype.hasOwnProperty.call(g, k)) freeze(g[k]);
  }
})(globalThis);
