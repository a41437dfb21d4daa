// expect: limit:loop_iterations|memory|deadline
const a = [];
while (true) a.push({ i: a.length, pad: "xxxxxxxxxxxxxxxx" });
