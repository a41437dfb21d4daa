// expect: limit:result_size
return Array.from({ length: 300000 }, (_, i) => ({ i, s: "abcdefghij" }));
