// expect: ok
// result: [true,true,true,false,"function"]
const r = [];
(() => { "use strict";
  try { sdk.test = null; } catch (e) { r.push(e instanceof TypeError); }
  try { utils.injected = 1; } catch (e) { r.push(e instanceof TypeError); }
  try { console.log = null; } catch (e) { r.push(e instanceof TypeError); }
})();
r.push(Reflect.deleteProperty(globalThis, "sdk"));
r.push(typeof sdk.test.echo);
return r;
