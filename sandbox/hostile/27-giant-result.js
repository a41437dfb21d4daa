// expect: limit:result_size|limit:deadline
// ~4.8 MB of JSON, over the 4 MiB result cap. Building it is CPU-bound, so on a loaded machine
// the deadline may come first; either limit is a correct end.
return Array.from({ length: 160000 }, (_, i) => ({ i, s: "abcdefghij" }));
