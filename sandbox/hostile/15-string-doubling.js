// expect: limit:memory|deadline
let s = "x";
for (let i = 0; i < 40; i++) s += s;
return s.length;
