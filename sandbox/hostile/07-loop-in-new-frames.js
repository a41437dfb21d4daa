// expect: limit:deadline
// Each call gets a fresh per-frame counter.
// line: 4
const spin = () => { for (let j = 0; j < 9e6; j++) {} };
for (let i = 0; i < 9e6; i++) spin();
