// expect: limit:deadline
const loop = () => Promise.resolve().then(loop);
loop();
await new Promise(() => {});
