// expect: ok
// result: {"found":[],"shared":["undefined","undefined","undefined","undefined"],"timers":["undefined","undefined"]}
const names = ["process", "require", "module", "Deno", "Bun", "std", "os", "fetch", "XMLHttpRequest",
  "WebAssembly", "importScripts", "__host", "host", "boa", "Boa", "print", "load", "read", "readFile"];
return {
  found: names.filter((n) => n in globalThis),
  shared: [typeof SharedArrayBuffer, typeof Atomics, typeof WeakRef, typeof FinalizationRegistry],
  timers: [typeof setTimeout, typeof setInterval],
};
