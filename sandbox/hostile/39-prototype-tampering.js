// expect: ok
// result: "tampered-in-this-realm-only"
// Tampering is allowed within one execution; the check program proves the next ones are clean.
Object.prototype.polluted = "yes";
Array.prototype.map = function () { return "hijacked"; };
Promise.prototype.then = function () { throw new Error("hijacked then"); };
Math.max = () => -1;
globalThis.leak = "leaked";
return "tampered-in-this-realm-only";
